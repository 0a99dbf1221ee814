import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Node } from './node.entity';

/** Raw bytes a node reported per UTC day, before its multiplier: what the counted figures came from. */
@Entity('node_traffic_days')
export class NodeTrafficDay {
  @PrimaryColumn({ type: 'uuid' })
  nodeId: string;

  @PrimaryColumn({ type: 'date' })
  day: string;

  @ManyToOne(() => Node, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'node_id' })
  node?: Node;

  @Column({ type: 'numeric', precision: 30, scale: 0, default: 0 })
  bytesUp: string;

  @Column({ type: 'numeric', precision: 30, scale: 0, default: 0 })
  bytesDown: string;

  /** The bytes counted against users after the multiplier. */
  @Column({ type: 'numeric', precision: 30, scale: 0, default: 0 })
  bytesCounted: string;
}
