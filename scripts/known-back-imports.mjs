/**
 * Imports from a shared folder of `src/` into a feature that the code still has, each a debt to
 * pay (docs/development.md, "Layers"): `npm run lint` accepts these and fails on any other. Remove
 * an entry with the import it names; never add one.
 */
export const KNOWN_BACK_IMPORTS = [];
