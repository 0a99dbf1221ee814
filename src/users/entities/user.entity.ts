import {
  Check,
  JoinColumn,
  ManyToOne,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
} from 'typeorm';

import type { StaffRole } from '../../auth/guards/role-sets';

// The roles are defined with the guards' role sets, which the web app reads too.
export { ROLES } from '../../auth/guards/role-sets';
export type Role = StaffRole;

/** An account: anonymous seed, Telegram, or staff (username and password). */
@Entity('users')
@Check('CHK_users_role', "role IN ('owner', 'moderator', 'partner', 'support')")
@Check('CHK_users_commission_percent', 'commission_percent >= 0 AND commission_percent <= 100')
@Check('CHK_users_traffic_used', 'traffic_used_bytes >= 0')
// The staff user list: newest first, all roles or one.
@Index('IDX_users_created', ['createdAt', 'id'])
@Index('IDX_users_role_created', ['role', 'createdAt', 'id'])
// Not `traffic_reset_at`: the reset job changes it on every user it resets, and an indexed column
// would make each of those updates write into every index (migration 0026).
export class User {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  /** Staff only. */
  @Index('UQ_users_username', { unique: true, where: 'username IS NOT NULL' })
  @Column({ type: 'text', nullable: true })
  username: string | null;

  /** Staff only: argon2id, with argon2's own random salt. Never returned. */
  @Column({ type: 'text', nullable: true })
  passwordHash: string | null;

  /** Seed accounts only: HMAC-SHA-256 of the seed keyed with SEED_PEPPER, hex. */
  @Index('UQ_users_seed_hash', { unique: true, where: 'seed_hash IS NOT NULL' })
  @Column({ type: 'text', nullable: true })
  seedHash: string | null;

  /** Telegram accounts: the numeric Telegram id (a string, as `pg` returns bigint). */
  @Index('UQ_users_tg_id', { unique: true, where: 'tg_id IS NOT NULL' })
  @Column({ type: 'bigint', nullable: true })
  tgId: string | null;

  @Column({ type: 'text', nullable: true })
  tgUsername: string | null;

  @Column({ type: 'text', nullable: true })
  role: Role | null;

  @Column({ type: 'boolean', default: false })
  canManageNodes: boolean;

  @Column({ type: 'numeric', precision: 5, scale: 2, nullable: true })
  commissionPercent: string | null;

  @Index('UQ_users_partner_code', { unique: true, where: 'partner_code IS NOT NULL' })
  @Column({ type: 'text', nullable: true })
  partnerCode: string | null;

  /** The partner this buyer is attached to; set once, the first attachment wins. */
  @Column({ type: 'uuid', nullable: true })
  referredByPartnerId: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'referred_by_partner_id' })
  referredByPartner?: User;

  /** The user-to-user referrer (bot `/start <tg_id>`); set once. */
  @Column({ type: 'uuid', nullable: true })
  referredByUserId: string | null;

  @ManyToOne(() => User, { onDelete: 'SET NULL' })
  @JoinColumn({ name: 'referred_by_user_id' })
  referredByUser?: User;

  @Column({ type: 'text', nullable: true })
  planName: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  subscriptionExpiresAt: Date | null;

  /** When the running subscription's days began; null while waiting for the first connection. */
  @Column({ type: 'timestamptz', nullable: true })
  subscriptionStartedAt: Date | null;

  /**
   * Set while an `on_first_use` subscription waits for its first counted traffic: the latest it
   * starts. The subscription then ends at this moment plus the plan's days.
   */
  @Column({ type: 'timestamptz', nullable: true })
  subscriptionOnHoldUntil: Date | null;

  @Column({ type: 'bigint', default: 0 })
  trafficUsedBytes: string;

  /** The next reset of used traffic; null when none is due (`src/users/traffic-reset.ts`). */
  @Column({ type: 'timestamptz', nullable: true })
  trafficResetAt: Date | null;

  /** A per-user override of the default traffic limit; null follows the default. */
  @Column({ type: 'bigint', nullable: true })
  trafficLimitBytes: string | null;

  @Column({ type: 'timestamptz', nullable: true })
  trialUsedAt: Date | null;

  /** When staff blocked the account; null while it is not blocked. */
  @Column({ type: 'timestamptz', nullable: true })
  blockedAt: Date | null;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
