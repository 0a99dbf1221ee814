import { ApiProperty } from '@nestjs/swagger';
import { IsArray } from 'class-validator';
import { MAX_CLICKS } from '../samegame';

export class ScoreRequest {
  /**
   * Checked click by click by the engine's `validateClicks`, not here, so that the raw JSON value
   * reaches it as sent.
   */
  @ApiProperty({
    type: 'array',
    items: {
      type: 'array',
      items: { type: 'integer', minimum: 0, maximum: 9 },
      minItems: 2,
      maxItems: 2,
    },
    maxItems: MAX_CLICKS,
    description:
      'the click path, `[row, col]` each, on the board as it stands after earlier clicks',
    example: [
      [9, 0],
      [8, 3],
    ],
  })
  @IsArray({ message: 'must be an array of [row, col]' })
  clicks: unknown[];
}
