import { Initial0001 } from './0001-initial';

/** Every migration in order; the numbers in the file names are their order. */
export const MIGRATIONS = [Initial0001];
