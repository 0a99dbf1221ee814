import { type INestApplication, RequestMethod, SetMetadata } from '@nestjs/common';
import {
  METHOD_METADATA,
  MODULE_PATH,
  PATH_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants';
import { MetadataScanner, ModulesContainer } from '@nestjs/core';

const OUTSIDE_PREFIX = 'route:outside-api-prefix';

/**
 * A controller served outside the API's prefix (the app excludes its paths from the global
 * prefix; `app.factory.ts`): its routes are listed at their own paths.
 */
export const OutsideApiPrefix = (): ClassDecorator => SetMetadata(OUTSIDE_PREFIX, true);

/** A controller handler with the method and path it is served at. */
export interface HandlerRoute {
  /** Lower case, as OpenAPI path items name operations. */
  method: string;
  /** With the global prefix; parameters as `{name}`, as OpenAPI writes them. */
  path: string;
  controller: abstract new (...args: never[]) => unknown;
  handler: object;
  /** The handler's name on the controller (the key of its parameter metadata). */
  methodName: string;
  /** `Controller.method`, to find it. */
  name: string;
}

/**
 * Every handler of every controller the application serves, read from Nest's own module
 * container. Refuses what would move paths without this knowing (RouterModule, versions).
 */
export function handlerRoutes(app: INestApplication, prefix: string): HandlerRoute[] {
  const scanner = new MetadataScanner();
  const routes: HandlerRoute[] = [];
  for (const module of app.get(ModulesContainer).values()) {
    const moduleKeys = Reflect.getMetadataKeys(module.metatype) as unknown[];
    if (moduleKeys.some((k) => typeof k === 'string' && k.startsWith(MODULE_PATH))) {
      throw new Error(`${module.metatype.name} has a RouterModule path: teach handlerRoutes it`);
    }
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: never[]) => object) | null;
      if (!controller) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as object;
        const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
        if (method === undefined) continue;
        if (
          Reflect.getMetadata(VERSION_METADATA, handler) !== undefined ||
          Reflect.getMetadata(VERSION_METADATA, controller) !== undefined
        ) {
          throw new Error(`${controller.name}.${name} is versioned: teach handlerRoutes it`);
        }
        const outside = Reflect.getMetadata(OUTSIDE_PREFIX, controller) === true;
        for (const path of joinedPaths(outside ? '' : prefix, controller, handler)) {
          routes.push({
            method: RequestMethod[method].toLowerCase(),
            path,
            controller,
            handler,
            methodName: name,
            name: `${controller.name}.${name}`,
          });
        }
      }
    }
  }
  return routes;
}

function joinedPaths(prefix: string, controller: object, handler: object): string[] {
  const list = (value: unknown): string[] =>
    value === undefined ? [''] : Array.isArray(value) ? value.map(String) : [String(value)];
  return list(Reflect.getMetadata(PATH_METADATA, controller)).flatMap((base) =>
    list(Reflect.getMetadata(PATH_METADATA, handler)).map(
      (own) =>
        '/' +
        [prefix, base, own]
          .join('/')
          .split('/')
          .filter((part) => part !== '')
          .map((part) => part.replace(/^:(\w+)$/, '{$1}'))
          .join('/'),
    ),
  );
}
