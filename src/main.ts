/**
 * The entry point, `node dist/main.js`. It answers `--help` and a mistyped argument before loading
 * anything of the service.
 */
import { helpText, parseCommandLine } from './system/command-line';

const commandLine = parseCommandLine(process.argv.slice(2));
if (commandLine.kind === 'help') {
  process.stdout.write(helpText());
  process.exit(0);
}
if (commandLine.kind === 'unknown') {
  // A mistyped command must not start the service in its place: 2, as for any usage error.
  process.stderr.write(`unknown argument: ${commandLine.given.join(' ')}\n\n${helpText()}`);
  process.exit(2);
}

// Loaded only here: `--help` and a usage error load none of the service's modules.
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./serve');
