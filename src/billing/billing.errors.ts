/** The transaction reference is already recorded on another invoice (the unique index refused it). */
export class TxRefUsedCondition extends Error {
  constructor(readonly ref: string) {
    super(`transaction already used: ${ref}`);
    this.name = 'TxRefUsedCondition';
  }
}

/** The random TON comment collided with an existing invoice's; try another. */
export class CommentTakenCondition extends Error {
  constructor() {
    super('invoice comment taken');
    this.name = 'CommentTakenCondition';
  }
}
