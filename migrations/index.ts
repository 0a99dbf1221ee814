import { Initial0001 } from './0001-initial';
import { Accounts0002 } from './0002-accounts';
import { RolesAndPartners0003 } from './0003-roles-and-partners';
import { Tickets0004 } from './0004-tickets';
import { Game0005 } from './0005-game';
import { AuditLog0006 } from './0006-audit-log';
import { Billing0007 } from './0007-billing';
import { Nodes0008 } from './0008-nodes';
import { InternalTraffic0009 } from './0009-internal-traffic';
import { Bot0011 } from './0011-bot';
import { Operations0012 } from './0012-operations';
import { PaymentsLedger0013 } from './0013-payments-ledger';
import { CleanupAndLimits0014 } from './0014-cleanup-and-limits';
import { UserList0015 } from './0015-user-list';
import { UsersFillfactor0016 } from './0016-users-fillfactor';
import { StaffActions0017 } from './0017-staff-actions';
import { NodeAgent0018 } from './0018-node-agent';
import { RoutingVersion0019 } from './0019-routing-version';
import { NodeSecretVersion0020 } from './0020-node-secret-version';
import { Devices0021 } from './0021-devices';
import { PlanPeriods0022 } from './0022-plan-periods';
import { StaffTotp0023 } from './0023-staff-totp';
import { BulkResetCredentials0024 } from './0024-bulk-reset-credentials';
import { PlanDisplay0025 } from './0025-plan-display';
import { HotTrafficResets0026 } from './0026-hot-traffic-resets';
import { NextTrafficResets0027 } from './0027-next-traffic-resets';
import { DeviceConnectionsNow0028 } from './0028-device-connections-now';
import { DeviceChangesPerStatement0029 } from './0029-device-changes-per-statement';
import { DevicesFillfactor0030 } from './0030-devices-fillfactor';
import { CountersAnalyzedLessOften0031 } from './0031-counters-analyzed-less-often';

/** Every migration in order; the numbers in the file names are their order. */
export const MIGRATIONS = [
  Initial0001,
  Accounts0002,
  RolesAndPartners0003,
  Tickets0004,
  Game0005,
  AuditLog0006,
  Billing0007,
  Nodes0008,
  InternalTraffic0009,
  Bot0011,
  Operations0012,
  PaymentsLedger0013,
  CleanupAndLimits0014,
  UserList0015,
  UsersFillfactor0016,
  StaffActions0017,
  NodeAgent0018,
  RoutingVersion0019,
  NodeSecretVersion0020,
  Devices0021,
  PlanPeriods0022,
  StaffTotp0023,
  BulkResetCredentials0024,
  PlanDisplay0025,
  HotTrafficResets0026,
  NextTrafficResets0027,
  DeviceConnectionsNow0028,
  DeviceChangesPerStatement0029,
  DevicesFillfactor0030,
  CountersAnalyzedLessOften0031,
];
