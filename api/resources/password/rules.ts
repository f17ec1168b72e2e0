// What a new password must be (docs/security.md): at least 10 characters; not only digits;
// not the account's e-mail address, the part of it before "@", or its username (ignoring
// case); not one of the commonly used passwords below (ignoring case); not the old password.
// Length does most of the work; the list stops the obvious choices that pass it.

export const MIN_PASSWORD_LENGTH = 10;

// Common choices of 10 or more characters (digit and keyboard runs, a word and digits, as
// at the top of public breach lists), plus names of this field and service.
const COMMON = new Set([
  '1234567890', '0123456789', '0987654321', '1111111111', '1q2w3e4r5t', '1qaz2wsx3edc', 'qwertyuiop',
  'asdfghjkl;', 'zxcvbnm123', 'password12', 'password123', 'password1234', 'password1!', 'passw0rd123',
  'iloveyou12', 'qwerty1234', 'qwerty12345', 'qwerty123456', 'abcdefghij', 'abc1234567', 'abcd123456',
  'welcome123', 'welcome1234', 'letmein123', 'admin12345', 'administrator', 'changeme123', 'trustno1234',
  'sunshine123', 'football123', 'baseball123', 'princess123', 'superman123', 'starwars123', 'dragon1234',
  'monkey1234', 'master1234', 'michael123', 'jessica123', 'charlie123', 'whatever123', 'computer123',
  'internet123', 'cryptocurrency', 'bitcoin123', 'ethereum123', 'blockchain', 'marketmaker', 'mm-metrics',
  'correcthorsebatterystaple',
]);

export function passwordProblems(password: string, account: { email: string; username: string }, oldPassword: string): string[] {
  const lower = password.toLowerCase();
  const problems: string[] = [];
  if (password.length < MIN_PASSWORD_LENGTH) problems.push(`This password is too short. It must contain at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (/^\d+$/.test(password)) problems.push('This password is entirely numeric.');
  const email = account.email.toLowerCase();
  if ([email, email.split('@')[0], account.username.toLowerCase()].includes(lower)) problems.push('This password is too similar to your e-mail address or username.');
  if (COMMON.has(lower)) problems.push('This password is too common.');
  if (password === oldPassword) problems.push('The new password must differ from the old one.');
  return problems;
}
