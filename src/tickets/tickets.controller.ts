import { Body, Controller, Get, HttpCode, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiCookieAuth, ApiCreatedResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../common/auth/auth-user';
import { CurrentUser } from '../common/auth/current-user.decorator';
import { SupportStaffGuard } from '../common/auth/role.guards';
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
} from './dto/ticket.response';
import { TicketsService } from './tickets.service';

/** A signed-in user's own tickets. */
@ApiTags('tickets')
@ApiCookieAuth()
@Controller('tickets')
export class TicketsController {
  constructor(private readonly tickets: TicketsService) {}

  @Post()
  @ApiCreatedResponse({ type: TicketThreadResponse })
  open(
    @CurrentUser() caller: AuthUser,
    @Body() body: CreateTicketRequest,
  ): Promise<TicketThreadResponse> {
    return this.tickets.open(caller.id, body.subject, body.message);
  }

  @Get()
  @ApiOkResponse({ type: TicketPageResponse, description: 'own tickets, newest first' })
  list(
    @CurrentUser() caller: AuthUser,
    @Query() query: TicketPageQuery,
  ): Promise<TicketPageResponse> {
    return this.tickets.listOwn(caller.id, query);
  }

  @Get(':id')
  @ApiOkResponse({ type: TicketThreadResponse })
  thread(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<TicketThreadResponse> {
    return this.tickets.thread(id, caller.id);
  }

  @Post(':id/messages')
  @ApiCreatedResponse({ type: TicketMessageResponse })
  reply(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: PostTicketMessageRequest,
  ): Promise<TicketMessageResponse> {
    return this.tickets.userReply(caller.id, id, body.body);
  }
}

/** The support queue: owner, moderator and support. */
@ApiTags('tickets')
@ApiCookieAuth()
@UseGuards(SupportStaffGuard)
@Controller('admin/tickets')
export class AdminTicketsController {
  constructor(private readonly tickets: TicketsService) {}

  @Get()
  @ApiOkResponse({ type: TicketPageResponse })
  queue(@Query() query: AdminTicketPageQuery): Promise<TicketPageResponse> {
    return this.tickets.listQueue(query.status, query);
  }

  @Get(':id')
  @ApiOkResponse({ type: TicketThreadResponse })
  thread(@Param('id', UuidPipe) id: string): Promise<TicketThreadResponse> {
    return this.tickets.thread(id);
  }

  @Post(':id/messages')
  @ApiCreatedResponse({ type: TicketMessageResponse })
  reply(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
    @Body() body: PostTicketMessageRequest,
  ): Promise<TicketMessageResponse> {
    return this.tickets.staffReply(caller.id, id, body.body);
  }

  @Post(':id/close')
  @HttpCode(200)
  @ApiOkResponse({ type: TicketResponse, description: 'also 200, unchanged, when already closed' })
  close(
    @CurrentUser() caller: AuthUser,
    @Param('id', UuidPipe) id: string,
  ): Promise<TicketResponse> {
    return this.tickets.close(caller.id, id);
  }
}
