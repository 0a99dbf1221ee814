/**
 * The entry point, `node dist/main.js`. It loads nothing of the service before deciding whether
 * to run it here or in a child with the allocator settings it needs (system/allocator.ts).
 */
import { relaunchWithAllocatorSettings } from './system/allocator';

if (!relaunchWithAllocatorSettings()) {
  // Loaded only here: the launcher never loads the service's modules.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  require('./serve');
}
