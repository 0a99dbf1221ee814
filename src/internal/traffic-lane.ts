import type { Request, RequestHandler } from 'express';
import { answerInLane, isNotFromBrowser, type LaneRoute } from '../common/lane';
import type { InternalCallers } from '../nodes/internal-callers';
import type { InternalController } from './internal.controller';
import type { ReadTrafficReport } from './traffic-report-reader';

export interface TrafficLaneParts {
  /** The route's full path, as Nest registers it (`/api/v1/internal/traffic`). */
  path: string;
  callers: InternalCallers;
  controller: InternalController;
  /** Called for each report the lane answers itself (a metric). */
  answered: () => void;
}

/**
 * POST /internal/traffic, every node's report of the minute, answered as soon as the body parser
 * has read it plainly (`readTrafficReport`, through `BodyReader.answer`), instead of going on
 * through CORS, the web app and Nest's router, guard and pipe: the validate lane's idea for the
 * route whose body is large. The body's limits, the memory held for large bodies and the reading
 * are the body parser's own, as for every large body.
 *
 * Only a report the route would accept is answered here: a POST without `Origin` or `Referer`
 * (the origin check's), from a node speaking for itself (or INTERNAL_SECRET). Any other, its body
 * read, goes on to the general pipeline, which answers or refuses it exactly as before. The answer
 * is the controller's own method's, and errors are answered by the exception filter's code.
 */
export function trafficLane(parts: TrafficLaneParts): RequestHandler {
  const { path, callers, controller, answered } = parts;
  const route: LaneRoute<ReadTrafficReport> = {
    path,
    admit: async (request: Request) => {
      if (!isNotFromBrowser(request)) return null;
      const report = request.body as ReadTrafficReport;
      const secret = request.header('x-internal-secret');
      return (await callers.speaksForNode(secret, report.node_id)) ? report : null;
    },
    answer: async (report) => {
      const answer = await controller.traffic(report);
      // Counted once answered: a report that fails is not.
      answered();
      return answer;
    },
  };
  return (request, response, next) => answerInLane(route, request, response, next);
}
