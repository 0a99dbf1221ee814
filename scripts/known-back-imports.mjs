/**
 * Imports from a shared folder of `src/` into a feature that the code still has, each a debt to
 * pay (docs/development.md, "Layers"): `npm run lint` accepts these and fails on any other. Remove
 * an entry with the import it names; never add one.
 */
export const KNOWN_BACK_IMPORTS = [
  // Every entity the DataSource loads: each module should register its own.
  'src/database/entities.ts -> *',
  // Job runs are counted in the metrics, which read features' figures too.
  'src/scheduler/job-runner.service.ts -> src/metrics/metrics.service',
];
