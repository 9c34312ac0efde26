/**
 * Frequently used passwords of 8+ characters (shorter ones fail the length rule anyway), compared
 * case-insensitively. Drawn from the well-known top lists of leaked passwords.
 */
const LIST = `
12345678 123456789 1234567890 0123456789 87654321 987654321 11111111 00000000 88888888 66666666
12341234 11223344 12121212 123123123 1q2w3e4r 1q2w3e4r5t 1qaz2wsx qwertyui qwertyuiop qwerty123
qwerty12 asdfghjk asdfghjkl zxcvbnm1 zxcvbnm123 password password1 password12 password123 passw0rd
p@ssw0rd p@ssword pa55word pa55w0rd iloveyou iloveyou1 princess1 sunshine sunshine1 football
football1 baseball baseball1 superman superman1 welcome1 welcome123 letmein1 letmein123 trustno1
whatever starwars 1234qwer abcd1234 abc12345 abc123456 a1234567 a12345678 aa123456 qq123456
admin123 admin1234 admin12345 administrator adminadmin root1234 changeme changeme1 default1
monkey123 dragon123 master123 michael1 jennifer jordan23 computer internet sunflower princess
charlie1 shadow12 chocolate butterfly liverpool chelsea1 arsenal1 mustang1 harley12 corvette
jessica1 michelle1 1234abcd q1w2e3r4 q1w2e3r4t5 z1x2c3v4 zaq12wsx !qaz2wsx 1qazxsw2 qazwsxedc
qweasdzxc 123qweasd 123qwe123 qwe12345 asd12345 zxc12345 11112222 12344321 123454321 147258369
159753123 192837465 31415926 520131400 5201314520 woaini1314 iloveyou2 loveyou1 test1234
testtest test12345 guest123 user1234 demo1234 secret12 secret123 letmein! welcome! password!
password@ qwerty!@# 1234567a 12345678a 123456789a aaaaaaaa abcdefgh abcdefg1 hello123 hello1234
football! samsung1 google123 facebook1 minecraft pokemon1 blink182 metallica nirvana1 linkin123
fuckyou1 biteme12 batman12 spiderman ironman1 matrix12 soccer12 hockey12 killer12 ranger12
hunter12 summer2024 summer2025 summer2026 winter2025 winter2026 spring2026 autumn2026 P@ssw0rd1
Passw0rd! Welcome1! Admin@123 Admin123! Qwerty123! Aa123456 Aa12345678 Abc12345 Abcd1234!
`;

export const COMMON_PASSWORDS: ReadonlySet<string> = new Set(
  LIST.split(/\s+/)
    .filter(Boolean)
    .map((p) => p.toLowerCase()),
);
