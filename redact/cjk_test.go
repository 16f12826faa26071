package redact

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCJKLabels: credentials labelled in Chinese, Japanese and Korean, and
// an ASCII key before a full-width colon (each was printed: a CJK label
// holds no byte Find stopped at).
func TestCJKLabels(t *testing.T) {
	const pw = "Zq7mK2pLx9Vw"
	checkSweep7(t, []sweep7Form{
		{"数据库密码：" + pw, pw, false},
		{"数据库密码: " + pw + "，请妥善保管。", pw, false},
		{"新密码=" + pw, pw, false},
		{"WiFi 密码 ： " + pw, pw, false},
		{"密碼：" + pw, pw, false},
		{"SSH 口令：" + pw, pw, false},
		{"API密钥：" + pw + "x", pw, false},
		{"阿里云秘钥＝" + pw, pw, false},
		{"私钥：“" + pw + "”", pw, false},
		{"金鑰：「" + pw + " 9」", pw, false},
		{"访问令牌为 " + pw, pw, false},
		{"数据库的密码是" + pw + "。", pw, false},
		{"管理员密码为 '" + pw + "'", pw, false},
		{"パスワードは " + pw + " です", pw, false},
		{"パスワード：" + pw, pw, false},
		{"비밀번호: " + pw, pw, false},
		{"password：" + pw, pw, false},
		{"AccessKeySecret：" + pw, pw, false},
		{"db_password＝" + pw, pw, false},
		{`{"note":"root密码：` + pw + `"}`, pw, false},
		{`{"user":"app","数据库密码":"` + pw + `"}`, pw, false},
		{`{\"user\":\"app\",\"数据库密码\": \"` + pw + `\"}`, pw, false},
	}, false, []string{
		"密码：请输入您的密码",
		"密码学：一门研究加密的学科 abcdefgh",
		"密码长度：12345678",
		"密码是什么？",
		"密码是 hunter",
		"密码：<你的密码>",
		"密码：******(fp:0123456789abcdef)",
		"用户名：alice123456",
		"令牌数：100000",
		"状态为 running123",
		"这是 Python3.10 版本",
		"结果为 42424242",
		"name：Zq7mK2pLx9Vw",
		"密码：“未设置”",
	})
	// A copula's value that reads as a word is masked, no credential.
	for _, s := range []string{"密码是 hunter2Xy!", "パスワードは sunflower です"} {
		if k, ok := credentialKind(s); ok {
			t.Errorf("a credential (%v): %s", k, s)
		}
		if out := MaskText(s); !strings.Contains(out, "******") {
			t.Errorf("not masked: %s", out)
		}
	}
}

// TestCJKKeys: a JSON key that ends in a CJK label names a credential.
func TestCJKKeys(t *testing.T) {
	for _, k := range []string{"密码", "数据库密码", "API密钥", "访问令牌", "パスワード", "비밀번호"} {
		if c := ClassifyKey(k); c != KeyCredential {
			t.Errorf("ClassifyKey(%q) = %v, want KeyCredential", k, c)
		}
	}
	for _, k := range []string{"密码学", "密码长度", "令牌数", "用户名", "说明", "码"} {
		if c := ClassifyKey(k); c != KeyPlain {
			t.Errorf("ClassifyKey(%q) = %v, want KeyPlain", k, c)
		}
	}
	if !MayHoldCredential(`{"配置":{"数据库密码":"Zq7mK2pLx9Vw"}}`) {
		t.Error("MayHoldCredential passes over a CJK credential key")
	}
}

// TestCJKTails: a delta that ends in a CJK label, or a label and its
// separator, is kept for the next one (its value may come there), though
// it holds no printable ASCII; CJK prose is not.
func TestCJKTails(t *testing.T) {
	for _, s := range []string{"数据库密码：", "数据库密码", "好的，访问令牌为 ", "パスワードは ", "密码＝", "你的密码是", "OK，数据库密码：", "db 密码: "} {
		if !MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = false", s)
		}
	}
	for _, s := range []string{"好的，谢谢。", "密码学", "这是一个测试", "密码长度：", "结果为 ", ""} {
		if MayStartCredential(s) {
			t.Errorf("MayStartCredential(%q) = true", s)
		}
	}
}

// TestIsCJKSeparatorIsCjkSep: IsCJKSeparator holds for exactly the
// characters at or above U+0080 at whose anchor bytes (aCJK) cjkSep reads a
// separator, over every character: the scan skips \uXXXX escapes of all
// the others before the pre-check (e2a's anchorAfterUnescape).
func TestIsCJKSeparatorIsCjkSep(t *testing.T) {
	n := 0
	for r := rune(0x80); r <= utf8.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		s := utf8.AppendRune([]byte("密码"), r)
		s = append(s, "Kqzmpxtrlv"...)
		sep := false
		for k := len("密码"); k < len(s)-len("Kqzmpxtrlv"); k++ {
			if anchor[s[k]]&aCJK == 0 {
				continue
			}
			if _, _, _, ok := cjkSep(s, k); ok {
				sep = true
			}
		}
		if sep != IsCJKSeparator(r) {
			t.Errorf("%U %q: cjkSep finds a separator %v, IsCJKSeparator %v", r, r, sep, IsCJKSeparator(r))
		}
		if sep {
			n++
		}
	}
	if n != len(cjkSeps) {
		t.Errorf("%d separators, want %d (cjkSeps)", n, len(cjkSeps))
	}
}

// TestIsCJKLabelEnd: IsCJKLabelEnd holds for exactly the last characters
// of cjkLabels.
func TestIsCJKLabelEnd(t *testing.T) {
	want := map[rune]bool{}
	for _, l := range cjkLabels {
		r, _ := utf8.DecodeLastRune(l)
		want[r] = true
	}
	for r := rune(0); r <= utf8.MaxRune; r++ {
		if IsCJKLabelEnd(r) != want[r] {
			t.Errorf("IsCJKLabelEnd(%q) = %v", r, !want[r])
		}
	}
}
