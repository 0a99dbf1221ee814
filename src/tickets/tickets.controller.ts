import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/guards/auth-user';
import { CurrentUser } from '../auth/guards/current-user.decorator';
import { SupportStaffGuard } from '../auth/guards/role.guards';
import { mapPage } from '../common/pagination';
import { RateLimited, type RateRule } from '../common/throttling/rate-limit.guard';
import { UuidPipe } from '../common/validation';
import {
  AdminTicketPageQuery,
  CreateTicketRequest,
  PostTicketMessageRequest,
  TicketPageQuery,
} from './dto/ticket.dto';
import {
  TicketMessageResponse,
  TicketPageResponse,
  TicketResponse,
  TicketThreadResponse,
  toMessageResponse,
  toThreadResponse,
  toTicketResponse,
} from './dto/ticket.response';
import { TicketsService } from './tickets.service';
import { Answers } from '../common/openapi/answers';

/** A user's new tickets and messages count together, per account and per address. */
const MESSAGES: RateRule[] = [
  { name: 'ticket-messages', limit: 'ticketMessagesPerAccount', by: 'account' },
  { name: 'ticket-messages', limit: 'ticketMessagesPerAddress', by: 'address' },
];

/** A signed-in user's own tickets. */
@ApiTags('tickets')
@Controller('tickets')
export class TicketsController {
  constructor(private readonly tickets: TicketsService) {}

  @Answers('CONFLICT')
  @Post()
  @RateLimited(...MESSAGES)
  @ApiCreatedResponse({ type: TicketThreadResponse })
  async open(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateTicketRequest,
  ): Promise<TicketThreadResponse> {
    return toThreadResponse(await this.tickets.open(caller.id, body.subject, body.message));
  }

  @Get()
  @ApiOkResponse({ type: TicketPageResponse, description: 'own tickets, newest first' })
  async list(
    @CurrentUser() caller: AuthUser,
    @Query() query: TicketPageQuery,
  ): Promise<TicketPageResponse> {
    return mapPage(await this.tickets.listOwn(caller.id, query), toTicketResponse);
  }

  @Answers('NO_TICKETS')
  @Get(':id')
  @ApiOkResponse({ type: TicketThreadResponse })
  async thread(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<TicketThreadResponse> {
    return toThreadResponse(await this.tickets.thread(id, caller.id));
  }

  @Answers('NO_TICKETS', 'TICKET_CLOSED')
  @Post(':id/messages')
  @RateLimited(...MESSAGES, {
    name: 'ticket-messages',
    limit: 'ticketMessagesPerTicket',
    by: 'ticket',
  })
  @ApiCreatedResponse({ type: TicketMessageResponse })
  async reply(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: PostTicketMessageRequest,
  ): Promise<TicketMessageResponse> {
    return toMessageResponse(await this.tickets.userReply(caller.id, id, body.body));
  }
}

/** The support queue: owner, moderator and support. */
@ApiTags('tickets')
@UseGuards(SupportStaffGuard)
@Controller('admin/tickets')
export class AdminTicketsController {
  constructor(private readonly tickets: TicketsService) {}

  @Get()
  @ApiOkResponse({ type: TicketPageResponse })
  async queue(@Query() query: AdminTicketPageQuery): Promise<TicketPageResponse> {
    return mapPage(
      await this.tickets.listQueue(query.status, query.user_id, query),
      toTicketResponse,
    );
  }

  @Answers('NO_TICKETS')
  @Get(':id')
  @ApiOkResponse({ type: TicketThreadResponse })
  async thread(@Param('id', UuidPipe) id: string): Promise<TicketThreadResponse> {
    return toThreadResponse(await this.tickets.thread(id));
  }

  @Answers('NO_TICKETS', 'TICKET_CLOSED')
  @Post(':id/messages')
  @ApiCreatedResponse({ type: TicketMessageResponse })
  async reply(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: PostTicketMessageRequest,
  ): Promise<TicketMessageResponse> {
    return toMessageResponse(await this.tickets.staffReply(caller.id, id, body.body));
  }

  @Answers('NO_TICKETS')
  @Post(':id/close')
  @HttpCode(200)
  @ApiOkResponse({ type: TicketResponse, description: 'also 200, unchanged, when already closed' })
  async close(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<TicketResponse> {
    return toTicketResponse(await this.tickets.close(caller.id, id));
  }
}
