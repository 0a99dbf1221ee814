import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
} from 'typeorm';
import { Node } from '../../nodes/entities/node.entity';

/**
 * A traffic report a node delivered and that was applied: a repeat of it counts nothing. Kept for
 * TRAFFIC_REPORTS_KEPT_DAYS (the clean-up job deletes by `received_at`).
 */
@Entity('traffic_reports')
@Index('IDX_traffic_reports_received_at', ['receivedAt'])
export class TrafficReport {
  @PrimaryColumn({ type: 'uuid' })
  nodeId: string;

  @PrimaryColumn({ type: 'uuid' })
  reportId: string;

  @ManyToOne(() => Node, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'node_id' })
  node?: Node;

  @Column({ type: 'integer' })
  entries: number;

  @CreateDateColumn({ type: 'timestamptz' })
  receivedAt: Date;
}
