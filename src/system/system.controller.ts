import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../common/public.decorator';
import { ConfigResponse, HealthResponse } from './system.dto';
import { SystemService } from './system.service';

@ApiTags('system')
@Controller()
export class SystemController {
  constructor(private readonly system: SystemService) {}

  @Public()
  @Get('config')
  @ApiOkResponse({ type: ConfigResponse })
  config(): ConfigResponse {
    return this.system.publicConfig();
  }

  @Public()
  @Get('health')
  @ApiOkResponse({ type: HealthResponse })
  @ApiServiceUnavailableResponse({ type: HealthResponse })
  health(): Promise<HealthResponse> {
    return this.system.health();
  }
}
