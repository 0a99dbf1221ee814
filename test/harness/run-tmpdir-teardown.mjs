// Global teardown of the tests that need no database: deletes the run's temporary folder once no
// other project of the run still uses it (see run-tmpdir.mjs).
import { restoreTmpdir } from './run-tmpdir.mjs';

export default function runTmpdirTeardown() {
  restoreTmpdir();
}
