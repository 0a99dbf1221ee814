/**
 * The entry point, `node dist/main.js`. It loads nothing of the service before deciding whether
 * to run it here or in a child with the allocator settings it needs (system/allocator.ts).
 */
import { helpText, parseCommandLine } from './system/command-line';
import { relaunchWithAllocatorSettings } from './system/allocator';

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

if (!relaunchWithAllocatorSettings(commandLine.kind === 'command')) {
  // Loaded only here: the launcher never loads the service's modules.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('./serve');
}
