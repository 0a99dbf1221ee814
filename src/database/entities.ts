import { BootstrapToken } from '../auth/entities/bootstrap-token.entity';
import { LoginCode } from '../auth/entities/login-code.entity';
import { RefreshSession } from '../auth/entities/refresh-session.entity';
import { PartnerCommission } from '../partners/entities/partner-commission.entity';
import { WithdrawalRequest } from '../partners/entities/withdrawal-request.entity';
import { AppSetting } from '../settings-store/app-setting.entity';
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
];
