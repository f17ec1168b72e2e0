// Mocha's settings. `npx mocha test/api/foo.test.ts` runs just the files named; with none
// named, every test. The real stack comes up once per run (test/support/hooks.ts).
const named = process.argv.slice(2).some((a) => /\.test\.ts$/.test(a));
module.exports = {
  'node-option': ['import=tsx'],
  spec: named ? [] : ['test/**/*.test.ts'],
  require: ['test/support/hooks.ts'],
  timeout: 60000,
  slow: 2000,
  exit: true,
};
