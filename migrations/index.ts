import { Initial0001 } from './0001-initial';
import { Accounts0002 } from './0002-accounts';
import { RolesAndPartners0003 } from './0003-roles-and-partners';

/** Every migration in order; the numbers in the file names are their order. */
export const MIGRATIONS = [Initial0001, Accounts0002, RolesAndPartners0003];
