import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** The unique id of a routing session_token that has validated once; kept until it expires. */
@Entity('used_session_tokens')
@Index('IDX_used_session_tokens_expires_at', ['expiresAt'])
export class UsedSessionToken {
  @PrimaryColumn({ type: 'uuid' })
  jti: string;

  @Column({ type: 'timestamptz' })
  expiresAt: Date;
}
