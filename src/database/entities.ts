import { AuditLogEntry } from '../audit/entities/audit-log-entry.entity';
import { BootstrapToken } from '../auth/entities/bootstrap-token.entity';
import { LoginCode } from '../auth/entities/login-code.entity';
import { RefreshSession } from '../auth/entities/refresh-session.entity';
import { GameRound } from '../game/entities/game-round.entity';
import { PartnerCommission } from '../partners/entities/partner-commission.entity';
import { WithdrawalRequest } from '../partners/entities/withdrawal-request.entity';
import { AppSetting } from '../settings-store/app-setting.entity';
import { TicketMessage } from '../tickets/entities/ticket-message.entity';
import { Ticket } from '../tickets/entities/ticket.entity';
import { User } from '../users/entities/user.entity';

/** Every entity of the service, listed once for the app, the tests and the TypeORM CLI. */
export const ENTITIES = [
  AppSetting,
  User,
  RefreshSession,
  LoginCode,
  BootstrapToken,
  PartnerCommission,
  WithdrawalRequest,
  GameRound,
  Ticket,
  TicketMessage,
  AuditLogEntry,
];
