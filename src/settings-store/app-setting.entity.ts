import { Column, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** Operator-changeable values kept in the database, such as the default traffic limit. */
@Entity('app_settings')
export class AppSetting {
  @PrimaryColumn({ type: 'text' })
  key: string;

  @Column({ type: 'jsonb' })
  value: unknown;

  @UpdateDateColumn({ type: 'timestamptz' })
  updatedAt: Date;
}
