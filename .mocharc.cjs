// Mocha's settings. `npx mocha test/api/foo.test.ts` runs just the files named; with none
// named (files after --ignore are not named), every test. The real stack comes up once per
// run (test/support/hooks.ts).
const argv = process.argv.slice(2);
const named = argv.some((a, i) => /\.test\.ts$/.test(a) && argv[i - 1] !== '--ignore' && argv[i - 1] !== '--exclude');
module.exports = {
  'node-option': ['import=tsx'],
  spec: named ? [] : ['test/**/*.test.ts'],
  require: ['test/support/hooks.ts'],
  timeout: 60000,
  slow: 2000,
  exit: true,
};
