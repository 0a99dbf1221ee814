import { NODE_ACCESS_ROLES } from '../auth/guards/role.guards';
import { Injectable } from '@nestjs/common';
import { AUDIT_ACTIONS, AuditService } from '../audit/audit.service';
import { keysetPage, type Page, type PageQuery, pagePosition } from '../common/pagination';
import { hashPassword } from '../auth/passwords';
import type { AuthUser } from '../auth/guards/auth-user';
import { AppError } from '../common/errors';
import {
  AppSettingsRepository,
  DEFAULT_TRAFFIC_LIMIT_KEY,
} from '../settings-store/app-settings.repository';
import type { UserView } from '../users/dto/user.response';
import type { Role, User } from '../users/entities/user.entity';
import { PartnerCodeTakenCondition, UsernameTakenCondition } from '../users/users.errors';
import { AccountsRepository, type NewStaff } from '../users/accounts.repository';
import { UserTrafficRepository } from '../users/user-traffic.repository';
import { AdvisoryLocks } from '../database/advisory-lock';
import { Transactional } from '@nestjs-cls/transactional';
import { UsersService } from '../users/users.service';
import { AdminRepository, type UserFilter } from './admin.repository';
import { generatePartnerCode } from './partner-code';
import { refuseSelfOrStaff } from './acting-on';

/** A generated partner code that collides is drawn again, a few times at most. */
const PARTNER_CODE_ATTEMPTS = 5;

export interface NewStaffAccount {
  username: string;
  password: string;
  role: Exclude<Role, 'owner'>;
  /** Partners only: 0 to 100 with up to 2 decimals. */
  commissionPercent?: number;
  /** Partners only: generated when absent; kept in lower case, as codes match in any case. */
  partnerCode?: string;
}

/** Staff administration: staff accounts, node access, traffic limits. Every change is audited. */
@Injectable()
export class AdminService {
  constructor(
    private readonly admin: AdminRepository,
    private readonly usersRepo: AccountsRepository,
    private readonly traffic: UserTrafficRepository,
    private readonly appSettings: AppSettingsRepository,
    private readonly locks: AdvisoryLocks,
    private readonly users: UsersService,
    private readonly audit: AuditService,
  ) {}

  async listUsers(filter: UserFilter, query: PageQuery): Promise<Page<UserView>> {
    const { after, limit } = pagePosition(query);
    const [rows, storedDefault] = await Promise.all([
      this.admin.pageUsers(filter, limit + 1, after),
      this.appSettings.defaultTrafficLimit(),
    ]);
    const defaultLimit = this.users.effectiveDefault(storedDefault);
    const page = keysetPage(rows, limit, (row) => ({ at: row.sortKey, id: row.user.id }));
    return {
      items: await this.users.views(
        page.items.map((row) => row.user),
        defaultLimit,
      ),
      next_cursor: page.next_cursor,
    };
  }

  getUser(id: string): Promise<UserView> {
    return this.users.view(id);
  }

  async createStaff(actorId: string, account: NewStaffAccount): Promise<UserView> {
    const passwordHash = await hashPassword(account.password);
    const commissionPercent =
      account.role === 'partner' ? (account.commissionPercent ?? 0).toFixed(2) : null;
    for (let attempt = 1; ; attempt += 1) {
      const partnerCode =
        account.role === 'partner'
          ? (account.partnerCode?.toLowerCase() ?? generatePartnerCode())
          : null;
      try {
        const created = await this.insertStaff(actorId, {
          username: account.username,
          passwordHash,
          role: account.role,
          commissionPercent,
          partnerCode,
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

  /** The account and its audit entry commit together; each attempt is its own transaction. */
  @Transactional()
  private async insertStaff(actorId: string, staff: NewStaff): Promise<User> {
    const user = await this.usersRepo.createStaff(staff);
    await this.audit.record({
      actorId,
      action: AUDIT_ACTIONS.staffCreated,
      targetType: 'user',
      targetId: user.id,
      before: null,
      after: {
        username: user.username,
        role: user.role,
        commission_percent: staff.commissionPercent ? Number(staff.commissionPercent) : null,
        partner_code: staff.partnerCode ?? null,
      },
    });
    return user;
  }

  /**
   * Grants or withdraws node management. The contract's node_manage is "owner, or staff with
   * can_manage_nodes", and staff are owners and moderators: partners and support cannot hold it.
   */
  async setNodeAccess(actor: AuthUser, targetId: string, value: boolean): Promise<UserView> {
    return this.users.changeThenView(targetId, () => this.changeNodeAccess(actor, targetId, value));
  }

  /** The user stays locked from the read to the audit entry, so before/after are exact. */
  @Transactional()
  private async changeNodeAccess(actor: AuthUser, targetId: string, value: boolean): Promise<void> {
    const user = await this.usersRepo.lockOne(targetId);
    refuseSelfOrStaff(actor, user);
    if (value && (user.role === null || !NODE_ACCESS_ROLES.includes(user.role))) {
      throw new AppError(
        'CONFLICT',
        `node access can only be given to staff accounts (${NODE_ACCESS_ROLES.join(', ')})`,
      );
    }
    if (user.canManageNodes === value) return;
    await this.usersRepo.setCanManageNodes(targetId, value);
    await this.audit.record({
      actorId: actor.id,
      action: AUDIT_ACTIONS.nodeAccessChanged,
      targetType: 'user',
      targetId,
      before: { can_manage_nodes: user.canManageNodes },
      after: { can_manage_nodes: value },
    });
  }

  /** A per-user override of the default limit; null removes it. */
  async setUserTrafficLimit(
    actor: AuthUser,
    targetId: string,
    bytes: number | null,
  ): Promise<UserView> {
    return this.users.changeThenView(targetId, () =>
      this.changeTrafficLimit(actor, targetId, bytes),
    );
  }

  @Transactional()
  private async changeTrafficLimit(
    actor: AuthUser,
    targetId: string,
    bytes: number | null,
  ): Promise<void> {
    const next = bytes === null ? null : String(bytes);
    const user = await this.usersRepo.lockOne(targetId);
    refuseSelfOrStaff(actor, user);
    if (user.trafficLimitBytes === next) return;
    await this.traffic.setTrafficLimit(targetId, next);
    await this.audit.record({
      actorId: actor.id,
      action: AUDIT_ACTIONS.trafficLimitChanged,
      targetType: 'user',
      targetId,
      before: { traffic_limit_bytes: bytesOrNull(user.trafficLimitBytes) },
      after: { traffic_limit_bytes: bytes },
    });
  }

  /** The default limit of users without an override; read per request, so it applies at once. */
  @Transactional()
  async setDefaultTrafficLimit(actorId: string, bytes: number): Promise<void> {
    const next = String(bytes);
    // Changes of the default run one after another, also while its row does not exist yet.
    await this.locks.lock(`app_settings:${DEFAULT_TRAFFIC_LIMIT_KEY}`);
    const stored = await this.appSettings.defaultTrafficLimit();
    if (stored === next) return;
    await this.appSettings.setDefaultTrafficLimit(next);
    await this.audit.record({
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
  }
}

function bytesOrNull(value: string | null): number | null {
  return value === null ? null : Number(value);
}
