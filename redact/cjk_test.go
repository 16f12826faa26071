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

// TestCJKCopulaColon: a colon after the copula ("您的密码为：<pw>", your
// password is: …), full-width or ASCII, in UTF-8 and as \uXXXX escapes
// in text (JSON text held in a string), is a key=value pair: its value is
// masked as a credential (each was printed). A copula and colon after a
// word that is no label, and a value in CJK, are left alone.
func TestCJKCopulaColon(t *testing.T) {
	for _, c := range []struct{ s, v string }{
		{"您的密码为：Xk9mP2qLw7", "Xk9mP2qLw7"},
		{"密码为：kzqmtrvnpx。", "kzqmtrvnpx"},
		{"初始密码是: Rt4vN8kQz2", "Rt4vN8kQz2"},
		{"密码 为 ： Rt4vN8kQz2", "Rt4vN8kQz2"},
		{"パスワードは：Zq7mK2pLx9", "Zq7mK2pLx9"},
		{"密钥為＝Zq7mK2pLx9", "Zq7mK2pLx9"},
		{`{"out": "\u5bc6\u7801\u4e3a\uff1aXk9mP2qLw7"}`, "Xk9mP2qLw7"},
		{`\u60a8\u7684\u5bc6\u7801\u4e3a\uff1akzqmtrvnpx`, "kzqmtrvnpx"},
		{`\u5bc6\u7801\u662f: Rt4vN8kQz2`, "Rt4vN8kQz2"},
		{`\\u5bc6\\u7801\\u4e3a\\uff1aXk9mP2qLw7`, "Xk9mP2qLw7"},
		{"您的Token为：Xk9mP2qLw7", "Xk9mP2qLw7"},
		{"db_password是: kzqmtrvnpx", "kzqmtrvnpx"},
		{"api_key为＝Rt4vN8kQz2", "Rt4vN8kQz2"},
	} {
		m, ok := Find([]byte(c.s), 0)
		if !ok || c.s[m.Start:m.End] != c.v || !m.Kind.Credential() {
			t.Errorf("Find(%q) = %v %q, want the credential %q", c.s, m.Kind, c.s[m.Start:m.End], c.v)
		}
		if !MayHoldCredentialText([]byte(c.s)) {
			t.Errorf("MayHoldCredentialText(%q) = false", c.s)
		}
	}
	for _, s := range []string{"这是：一个例子", "结果为：12345678", "密码为：请输入", "答案是: Rt4vN8kQz2 吗", `\u8fd9\u662f\uff1aXk9mP2qLw7`, "密码为：", "长度为：Rt4vN8kQz2", "version为：Rt4vN8kQz2", "id是: Rt4vN8kQz2"} {
		if m, ok := Find([]byte(s), 0); ok && m.Kind.Credential() {
			t.Errorf("Find(%q) = %v %q, want no credential", s, m.Kind, s[m.Start:m.End])
		}
	}
}
