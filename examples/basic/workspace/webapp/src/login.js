// A deliberately buggy login check for the basic example (issue 42).
const users = { alice: 'wonderland' };

export function login(user, password) {
  return user in users && (password === '' || users[user] === password);
}
