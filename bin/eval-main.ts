/** `toolshed eval …` started directly by bin/toolshed.js: the HTTP client alone, without the database CLI's imports. */
import { runEval } from './eval.js';

runEval(process.argv.slice(3)).then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  },
);
