import { Controller, Get, Query, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { StaffGuard } from '../auth/guards/role.guards';
import { DEFAULT_STATS_DAYS, StatsQuery, StatsResponse, toStatsResponse } from './dto/stats.dto';
import { StatsService } from './stats.service';

@ApiTags('admin')
@Controller('admin/stats')
export class AdminStatsController {
  constructor(private readonly stats: StatsService) {}

  @Get()
  @UseGuards(StaffGuard)
  @ApiOkResponse({ type: StatsResponse })
  async get(@Query() query: StatsQuery): Promise<StatsResponse> {
    const { totals, days } = await this.stats.figures(query.days ?? DEFAULT_STATS_DAYS);
    return toStatsResponse(totals, days);
  }
}
