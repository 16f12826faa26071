package redact

import "testing"

// TestSweep10Tools: command lines whose tool takes a password in a flag of
// its own (each was printed with no finding): openssl enc -k <pw>, lftp -u
// user,<pw>, mosquitto_passwd -b <file> <user> <pw> and RAR's -hp<pw>
// (and -p<pw>).
func TestSweep10Tools(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"openssl enc -aes-256-cbc -salt -k " + pw + " -in a.tar -out a.enc", pw, false},
		{"openssl enc -d -aes-256-cbc -k '" + pw + "' -in a.enc", pw, false},
		{"lftp -u bob," + pw + " sftp://files.example.com", pw, false},
		{"lftp -u 'bob," + pw + "' -e 'mirror -R dist /www; quit' ftp://h", pw, false},
		{"mosquitto_passwd -b /etc/mosquitto/passwd bob " + pw, pw, false},
		{"sudo mosquitto_passwd -c -b passwd bob " + pw, pw, false},
		{"rar a -hp" + pw + " backup.rar data/", pw, false},
		{"unrar x -p" + pw + " backup.rar", pw, false},
	}, true, []string{
		"openssl enc -aes-256-cbc -kfile key.txt -in a",
		"openssl enc -aes-256-cbc -k $PASS -in a",
		"openssl s_client -k -connect host:443",
		"lftp -u bob sftp://files.example.com",
		"lftp -u bob, sftp://files.example.com",
		"mosquitto_passwd -c passwd bob",
		"mosquitto_passwd -b passwd bob",
		"rar a -hp backup.rar data/",
		"rar a -p backup.rar data/",
		"mysql -hprod-db.internal -u app mydb",
		"mysql -h prod-db -u app -p mydb",
		"curl -hproxy https://example.com",
		"lftp -u bob,$FTP_PASSWORD sftp://h",
		"openssl enc -aes-256-cbc -k <password> -in a",
	})
	checkSweep7(t, []sweep7Form{
		{`{"cmd":"rar a -m5 -hp` + pw + ` b.rar d"}`, pw, false},
		{`{"cmd":"openssl enc -aes-256-cbc -k ` + pw + ` -in a"}`, pw, false},
	}, false, nil)
}

// TestSweep10SudoStdin: the password echoed into sudo -S on the same line
// (common in an agent's tool call) was printed; a variable, a file or a
// sentence is none.
func TestSweep10SudoStdin(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"echo " + pw + " | sudo -S apt-get install -y nginx", pw, false},
		{"echo '" + pw + "' | sudo -S systemctl restart app", pw, false},
		{"cd /srv && echo -n \"" + pw + "\" | sudo -S -k ./deploy.sh", pw, false},
		{`{"command":"echo ` + pw + ` | sudo -S whoami"}`, pw, false},
		{`{"command":"echo \"` + pw + `\" | sudo -S whoami\n"}`, pw, false},
	}, false, []string{
		"echo $SUDO_PASSWORD | sudo -S apt-get update",
		`echo "$PW" | sudo -S whoami`,
		"cat ~/.pw | sudo -S whoami",
		"echo installing the unit | sudo -S tee /etc/motd",
		"sudo -S",
		"sudo -S whoami < ~/.pw",
		"echo hello | pseudo -S x",
	})
}

// TestSweep10SetPassword: MySQL's SET PASSWORD FOR <user> = '<pw>' (and
// the older = PASSWORD('<pw>')) was printed with no finding.
func TestSweep10SetPassword(t *testing.T) {
	const pw = "Kqz9pwmvtlrbx"
	checkSweep7(t, []sweep7Form{
		{"SET PASSWORD FOR 'bob'@'%' = '" + pw + "';", pw, false},
		{"mysql> set password for bob@localhost = PASSWORD('" + pw + "');", pw, false},
		{"SET PASSWORD FOR `app`@`10.0.%` = \"" + pw + "\"", pw, false},
		{`{"sql":"SET PASSWORD FOR 'bob'@'%' = '` + pw + `';"}`, pw, false},
		{`{"sql":"SET PASSWORD FOR \"bob\" = \"` + pw + `\";"}`, pw, false},
	}, false, []string{
		"SET PASSWORD FOR 'bob'@'%' = ?;",
		"SET PASSWORD FOR 'bob'@'%' = @new_pw;",
		"SET PASSWORD FOR 'bob'@'%' = '';",
		"SET PASSWORD FOR 'bob'@'%' = '******';",
		"the reset password for bob = the one in the vault",
		"x = y",
	})
}
