import { Initial0001 } from './0001-initial';
import { Accounts0002 } from './0002-accounts';
import { RolesAndPartners0003 } from './0003-roles-and-partners';
import { Tickets0004 } from './0004-tickets';
import { Game0005 } from './0005-game';
import { AuditLog0006 } from './0006-audit-log';
import { Billing0007 } from './0007-billing';

/** Every migration in order; the numbers in the file names are their order. */
export const MIGRATIONS = [
  Initial0001,
  Accounts0002,
  RolesAndPartners0003,
  Tickets0004,
  Game0005,
  AuditLog0006,
  Billing0007,
];
