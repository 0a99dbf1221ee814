/**
 * What `node dist/main.js` accepts. Kept free of the service's modules: the entry point (main.ts)
 * reads it before loading any of them.
 */

/** The one-off commands: each runs against the service's database with its settings, then exits. */
export const COMMANDS = {
  '--create-owner': 'create an owner account (asks for a username and a password)',
  '--reset-password':
    "set a staff account's password and end its sessions: the way back in for a locked-out owner",
  '--seed-demo': 'create the example plans that do not exist yet',
  '--reseal-secrets': "seal every node's secrets under DATA_ENCRYPTION_KEY after a key change",
} as const;

export type CommandFlag = keyof typeof COMMANDS;

export type CommandLine =
  | { kind: 'serve' }
  | { kind: 'help' }
  | { kind: 'command'; flag: CommandFlag }
  | { kind: 'unknown'; given: string[] };

/** Reads the arguments after the script's path (`process.argv.slice(2)`). */
export function parseCommandLine(args: string[]): CommandLine {
  if (args.some((arg) => arg === '--help' || arg === '-h')) return { kind: 'help' };
  const unknown = args.filter((arg) => !(arg in COMMANDS));
  if (unknown.length > 0) return { kind: 'unknown', given: unknown };
  if (args.length > 1) return { kind: 'unknown', given: args.slice(1) };
  return args.length === 0 ? { kind: 'serve' } : { kind: 'command', flag: args[0] as CommandFlag };
}

export function helpText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((flag) => flag.length));
  const commands = Object.entries(COMMANDS).map(
    ([flag, what]) => `  node dist/main.js ${flag.padEnd(width)}  ${what}`,
  );
  return [
    'Usage:',
    `  node dist/main.js ${''.padEnd(width)}  run the service`,
    ...commands,
    `  node dist/main.js ${'--help'.padEnd(width)}  this text`,
    '',
    'Settings are environment variables, read by the service and the commands alike:',
    '  .env.example            every setting with its default and meaning',
    '  DATA_DIR/secrets.json   development secrets, generated when unset (never in production)',
    '  DATA_DIR/postgres/      the embedded PostgreSQL when DATABASE_URL is unset (development)',
    'The service reads no settings file itself: export the variables, or give a .env file to',
    'systemd (EnvironmentFile=), Docker Compose or `node --env-file=.env dist/main.js`.',
    'More: docs/operations.md.',
    '',
  ].join('\n');
}
