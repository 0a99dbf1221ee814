import * as protobuf from 'protobufjs';

/**
 * The dozen messages of the core's gRPC API that the agent uses, as protobuf text. Xray and V2Ray 4.x
 * have the same messages under different package prefixes (`xray.` and `v2ray.core.`), so each file's
 * package is written with the prefix in place of `PREFIX`. Field numbers are those of the cores' own
 * .proto files (app/proxyman/command, app/stats/command, common/serial, common/protocol, proxy/vless).
 */
const FILES: readonly string[] = [
  `syntax = "proto3";
  package PREFIX.common.serial;
  message TypedMessage { string type = 1; bytes value = 2; }`,
  `syntax = "proto3";
  package PREFIX.common.protocol;
  message User { uint32 level = 1; string email = 2; PREFIX.common.serial.TypedMessage account = 3; }`,
  `syntax = "proto3";
  package PREFIX.proxy.vless;
  message Account { string id = 1; string flow = 2; string encryption = 3; }`,
  `syntax = "proto3";
  package PREFIX.app.proxyman.command;
  message AddUserOperation { PREFIX.common.protocol.User user = 1; }
  message RemoveUserOperation { string email = 1; }
  message AlterInboundRequest { string tag = 1; PREFIX.common.serial.TypedMessage operation = 2; }
  message AlterInboundResponse {}
  service HandlerService {
    rpc AlterInbound(AlterInboundRequest) returns (AlterInboundResponse);
  }`,
  `syntax = "proto3";
  package PREFIX.app.stats.command;
  message QueryStatsRequest { string pattern = 1; bool reset = 2; }
  message Stat { string name = 1; int64 value = 2; }
  message QueryStatsResponse { repeated Stat stat = 1; }
  message SysStatsRequest {}
  message SysStatsResponse {
    uint32 NumGoroutine = 1; uint32 NumGC = 2; uint64 Alloc = 3; uint64 TotalAlloc = 4;
    uint64 Sys = 5; uint64 Mallocs = 6; uint64 Frees = 7; uint64 LiveObjects = 8;
    uint64 PauseTotalNs = 9; uint32 Uptime = 10;
  }
  service StatsService {
    rpc QueryStats(QueryStatsRequest) returns (QueryStatsResponse);
    rpc GetSysStats(SysStatsRequest) returns (SysStatsResponse);
  }`,
];

export type CorePrefix = 'xray' | 'v2ray.core';

/** One unary method: its gRPC path and its request and answer types. */
export interface CoreMethod {
  path: string;
  request: protobuf.Type;
  response: protobuf.Type;
}

export interface CoreSchema {
  prefix: CorePrefix;
  typedMessage: protobuf.Type;
  user: protobuf.Type;
  vlessAccount: protobuf.Type;
  addUser: protobuf.Type;
  removeUser: protobuf.Type;
  alterInbound: CoreMethod;
  queryStats: CoreMethod;
  getSysStats: CoreMethod;
}

export function coreSchema(prefix: CorePrefix): CoreSchema {
  const root = new protobuf.Root();
  for (const file of FILES) protobuf.parse(file.replaceAll('PREFIX', prefix), root);
  root.resolveAll();
  const type = (name: string): protobuf.Type => root.lookupType(`${prefix}.${name}`);
  const method = (service: string, name: string): CoreMethod => {
    const found = root.lookupService(`${prefix}.${service}`).methods[name];
    return {
      path: `/${prefix}.${service}/${name}`,
      request: root.lookupType(found.requestType),
      response: root.lookupType(found.responseType),
    };
  };
  return {
    prefix,
    typedMessage: type('common.serial.TypedMessage'),
    user: type('common.protocol.User'),
    vlessAccount: type('proxy.vless.Account'),
    addUser: type('app.proxyman.command.AddUserOperation'),
    removeUser: type('app.proxyman.command.RemoveUserOperation'),
    alterInbound: method('app.proxyman.command.HandlerService', 'AlterInbound'),
    queryStats: method('app.stats.command.StatsService', 'QueryStats'),
    getSysStats: method('app.stats.command.StatsService', 'GetSysStats'),
  };
}

/** A message as the cores' TypedMessage: its full type name and its encoded bytes. */
export function typed(type: protobuf.Type, value: object): { type: string; value: Uint8Array } {
  return {
    type: type.fullName.replace(/^\./, ''),
    value: type.encode(type.create(value)).finish(),
  };
}
