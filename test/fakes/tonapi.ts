// The fakes the service's demo mode also runs live in src/billing/demo/.
export * from '../../src/billing/demo/fake-tonapi';
