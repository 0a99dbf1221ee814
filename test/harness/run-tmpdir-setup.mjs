// Global setup of the tests that need no database (jest's `unit` project): only the run's own
// temporary folder (see run-tmpdir.mjs). No PostgreSQL is started for them.
import { useRunTmpdir } from './run-tmpdir.mjs';

export default function runTmpdirSetup() {
  useRunTmpdir();
}
