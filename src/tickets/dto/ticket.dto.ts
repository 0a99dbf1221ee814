import { PageQuery } from '../../common/pagination';
import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, IsUUID, Length, NotContains } from 'class-validator';
import { IsVisibleText } from '../../common/visible-text';
import { TICKET_STATUSES, type TicketStatus } from '../entities/ticket.entity';

/** PostgreSQL text cannot hold NUL; letting one through would be a 500. */
const NUL = '\u0000';
const NUL_MESSAGE = 'must not contain NUL characters';

export class CreateTicketRequest {
  @ApiProperty({ minLength: 1, maxLength: 200, example: 'Cannot connect from my phone' })
  @IsString()
  @Length(1, 200, { message: 'must be 1 to 200 characters' })
  @IsVisibleText()
  @NotContains(NUL, { message: NUL_MESSAGE })
  subject: string;

  @ApiProperty({ minLength: 1, maxLength: 4000, description: 'the first message of the thread' })
  @IsString()
  @Length(1, 4000, { message: 'must be 1 to 4000 characters' })
  @IsVisibleText({ lines: true })
  @NotContains(NUL, { message: NUL_MESSAGE })
  message: string;
}

export class PostTicketMessageRequest {
  @ApiProperty({ minLength: 1, maxLength: 4000 })
  @IsString()
  @Length(1, 4000, { message: 'must be 1 to 4000 characters' })
  @IsVisibleText({ lines: true })
  @NotContains(NUL, { message: NUL_MESSAGE })
  body: string;
}

export class TicketPageQuery extends PageQuery {}

export class AdminTicketPageQuery extends TicketPageQuery {
  @ApiProperty({
    required: false,
    enum: TICKET_STATUSES,
    default: 'open',
    description: 'open: oldest first (the queue); closed: most recently closed first',
  })
  @IsOptional()
  @IsIn(TICKET_STATUSES)
  status?: TicketStatus;

  @ApiProperty({ required: false, format: 'uuid', description: "only this account's tickets" })
  @IsOptional()
  @IsUUID()
  user_id?: string;
}
