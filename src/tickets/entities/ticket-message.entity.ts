import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { User } from '../../users/entities/user.entity';
import { type AuthorRole, Ticket } from './ticket.entity';

/** One message of a ticket's thread, by its owner (`user`) or by support staff (`staff`). */
@Entity('ticket_messages')
@Check('CHK_ticket_messages_author_role', "author_role IN ('user', 'staff')")
@Index('IDX_ticket_messages_ticket', ['ticketId', 'createdAt'])
export class TicketMessage {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ type: 'uuid' })
  ticketId: string;

  @ManyToOne(() => Ticket, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'ticket_id' })
  ticket?: Ticket;

  @Column({ type: 'uuid' })
  authorId: string;

  /** RESTRICT: a staff account with replies in users' threads must not silently erase them. */
  @ManyToOne(() => User, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'author_id' })
  author?: User;

  @Column({ type: 'text' })
  authorRole: AuthorRole;

  @Column({ type: 'text' })
  body: string;

  @CreateDateColumn({ type: 'timestamptz' })
  createdAt: Date;
}
