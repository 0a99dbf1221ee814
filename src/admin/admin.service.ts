import { NODE_ACCESS_ROLES } from '../common/auth/role.guards';
import { Injectable } from '@nestjs/common';
import { AUDIT_ACTIONS, AuditService, parseCursor } from '../audit/audit.service';
import { DEFAULT_PAGE_LIMIT } from '../common/pagination';
import { encodeCursor } from '../common/pagination';
import { hashPassword } from '../auth/passwords';
import { AppError } from '../common/errors';
import { DEFAULT_TRAFFIC_LIMIT_KEY } from '../settings-store/app-settings.repository';
import { type UserResponse } from '../users/dto/user.response';
import type { Role } from '../users/entities/user.entity';
import { UsernameTakenCondition } from '../users/users.errors';
import { UsersService } from '../users/users.service';
import { PartnerCodeTakenCondition } from './admin.errors';
import { AdminRepository, type UserFilter } from './admin.repository';
import type { AdminUsersPage, DefaultTrafficLimitResponse } from './dto/admin-users.dto';
import { generatePartnerCode } from './partner-code';

/** A generated partner code that collides is drawn again, a few times at most. */
const PARTNER_CODE_ATTEMPTS = 5;

export interface NewStaffAccount {
  username: string;
  password: string;
  role: Exclude<Role, 'owner'>;
  /** Partners only: 0 to 100 with up to 2 decimals. */
  commissionPercent?: number;
  /** Partners only: generated when absent. */
  partnerCode?: string;
}

/** Staff administration: staff accounts, node access, traffic limits. Every change is audited. */
@Injectable()
export class AdminService {
  constructor(
    private readonly admin: AdminRepository,
    private readonly users: UsersService,
    private readonly audit: AuditService,
  ) {}

  async listUsers(
    filter: UserFilter,
    limit = DEFAULT_PAGE_LIMIT,
    cursor?: string,
  ): Promise<AdminUsersPage> {
    const after = parseCursor(cursor);
    const [rows, storedDefault] = await Promise.all([
      this.admin.pageUsers(filter, limit + 1, after),
      this.admin.getDefaultLimit(),
    ]);
    const defaultLimit = this.users.effectiveDefault(storedDefault);
    const page = rows.slice(0, limit);
    const last = rows.length > limit ? page[page.length - 1] : undefined;
    return {
      items: await this.users.views(
        page.map((row) => row.user),
        defaultLimit,
      ),
      next_cursor: last ? encodeCursor({ at: last.cursorAt, id: last.user.id }) : null,
    };
  }

  getUser(id: string): Promise<UserResponse> {
    return this.users.view(id);
  }

  async createStaff(actorId: string, account: NewStaffAccount): Promise<UserResponse> {
    const passwordHash = await hashPassword(account.password);
    const commissionPercent =
      account.role === 'partner' ? (account.commissionPercent ?? 0).toFixed(2) : null;
    for (let attempt = 1; ; attempt += 1) {
      const partnerCode =
        account.role === 'partner' ? (account.partnerCode ?? generatePartnerCode()) : null;
      try {
        const created = await this.admin.transaction(async (manager) => {
          const user = await this.admin.createStaff(manager, {
            username: account.username,
            passwordHash,
            role: account.role,
            commissionPercent,
            partnerCode,
          });
          await this.audit.record(manager, {
            actorId,
            action: AUDIT_ACTIONS.staffCreated,
            targetType: 'user',
            targetId: user.id,
            before: null,
            after: {
              username: user.username,
              role: user.role,
              commission_percent: commissionPercent === null ? null : Number(commissionPercent),
              partner_code: partnerCode,
            },
          });
          return user;
        });
        return await this.users.view(created.id);
      } catch (error) {
        if (error instanceof UsernameTakenCondition)
          throw new AppError('USERNAME_TAKEN', 'this username is already taken');
        if (error instanceof PartnerCodeTakenCondition) {
          if (account.partnerCode !== undefined)
            throw new AppError('CONFLICT', 'this partner code is already taken');
          if (attempt < PARTNER_CODE_ATTEMPTS) continue;
        }
        throw error;
      }
    }
  }

  /**
   * Grants or withdraws node management. The contract's node_manage is "owner, or staff with
   * can_manage_nodes", and staff are owners and moderators: partners and support cannot hold it.
   */
  async setNodeAccess(actorId: string, targetId: string, value: boolean): Promise<UserResponse> {
    await this.users.withNoUser(() =>
      this.admin.transaction(async (manager) => {
        const user = await this.admin.lockUser(manager, targetId);
        if (value && (user.role === null || !NODE_ACCESS_ROLES.includes(user.role))) {
          throw new AppError(
            'CONFLICT',
            `node access can only be given to staff accounts (${NODE_ACCESS_ROLES.join(', ')})`,
          );
        }
        if (user.canManageNodes === value) return;
        await this.admin.setCanManageNodes(manager, targetId, value);
        await this.audit.record(manager, {
          actorId,
          action: AUDIT_ACTIONS.nodeAccessChanged,
          targetType: 'user',
          targetId,
          before: { can_manage_nodes: user.canManageNodes },
          after: { can_manage_nodes: value },
        });
      }),
    );
    return this.users.view(targetId);
  }

  /** A per-user override of the default limit; null removes it. */
  async setUserTrafficLimit(
    actorId: string,
    targetId: string,
    bytes: number | null,
  ): Promise<UserResponse> {
    const next = bytes === null ? null : String(bytes);
    await this.users.withNoUser(() =>
      this.admin.transaction(async (manager) => {
        const user = await this.admin.lockUser(manager, targetId);
        if (user.trafficLimitBytes === next) return;
        await this.admin.setTrafficLimit(manager, targetId, next);
        await this.audit.record(manager, {
          actorId,
          action: AUDIT_ACTIONS.trafficLimitChanged,
          targetType: 'user',
          targetId,
          before: { traffic_limit_bytes: bytesOrNull(user.trafficLimitBytes) },
          after: { traffic_limit_bytes: bytes },
        });
      }),
    );
    return this.users.view(targetId);
  }

  /** The default limit of users without an override; read per request, so it applies at once. */
  async setDefaultTrafficLimit(
    actorId: string,
    bytes: number,
  ): Promise<DefaultTrafficLimitResponse> {
    const next = String(bytes);
    await this.admin.transaction(async (manager) => {
      await this.admin.lockDefaultLimit(manager);
      const stored = await this.admin.getDefaultLimit(manager);
      if (stored === next) return;
      await this.admin.setDefaultLimit(manager, next);
      await this.audit.record(manager, {
        actorId,
        action: AUDIT_ACTIONS.defaultTrafficLimitChanged,
        targetType: 'setting',
        targetId: DEFAULT_TRAFFIC_LIMIT_KEY,
        before: {
          default_bytes: Number(this.users.effectiveDefault(stored)),
          stored: stored !== null,
        },
        after: { default_bytes: bytes, stored: true },
      });
    });
    return { default_bytes: bytes };
  }
}

function bytesOrNull(value: string | null): number | null {
  return value === null ? null : Number(value);
}
