import { BootstrapToken } from './entities/bootstrap-token.entity';
import { LoginCode } from './entities/login-code.entity';
import { RefreshSession } from './entities/refresh-session.entity';

/** The entities of auth/: AuthModule registers them, src/entities.ts joins them for the CLI. */
export const AUTH_ENTITIES = [RefreshSession, LoginCode, BootstrapToken];
