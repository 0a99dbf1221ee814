import { NodeTrafficDay } from './entities/node-traffic-day.entity';
import { Node } from './entities/node.entity';

/** The entities of nodes/: NodesModule registers them, src/entities.ts joins them for the CLI. */
export const NODES_ENTITIES = [Node, NodeTrafficDay];
