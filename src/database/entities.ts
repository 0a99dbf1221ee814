import { AuditLogEntry } from '../audit/entities/audit-log-entry.entity';
import { BootstrapToken } from '../auth/entities/bootstrap-token.entity';
import { LoginCode } from '../auth/entities/login-code.entity';
import { RefreshSession } from '../auth/entities/refresh-session.entity';
import { BotChat } from '../bot/entities/bot-chat.entity';
import { BotReminder } from '../bot/entities/bot-reminder.entity';
import { Invoice } from '../billing/entities/invoice.entity';
import { PlanPrice } from '../billing/entities/plan-price.entity';
import { Plan } from '../billing/entities/plan.entity';
import { PaymentScan } from '../billing/entities/payment-scan.entity';
import { ReceivedPayment } from '../billing/entities/received-payment.entity';
import { TelegramPayment } from '../billing/entities/telegram-payment.entity';
import { GameRound } from '../game/entities/game-round.entity';
import { NodeTrafficDay } from '../nodes/entities/node-traffic-day.entity';
import { TrafficReport } from '../internal/entities/traffic-report.entity';
import { UsedSessionToken } from '../internal/entities/used-session-token.entity';
import { Node } from '../nodes/entities/node.entity';
import { PartnerCommission } from '../billing/entities/partner-commission.entity';
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
  Plan,
  PlanPrice,
  Invoice,
  TelegramPayment,
  ReceivedPayment,
  PaymentScan,
  GameRound,
  Ticket,
  TicketMessage,
  AuditLogEntry,
  Node,
  UsedSessionToken,
  TrafficReport,
  NodeTrafficDay,
  BotChat,
  BotReminder,
];
