import SerializerSelector, { type SerializerFactory } from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler } from 'fastify';

/**
 * Route schemas compiled on first use, not at startup. Fastify compiles every route's request
 * validators (Ajv) and response serializers (fast-json-stringify) before it listens: ~0.6 s of
 * the service's start on this machine, for routes most of which will not be called in that
 * second. Here each compiler returns a stand-in that compiles its schema the first time it runs;
 * `warm()` then compiles what is left one schema per turn of the event loop, so within a second
 * of listening every route runs compiled code and requests are served in between.
 *
 * A schema that cannot compile therefore fails when its route is first called or warmed, not
 * at startup; every route's schemas are compiled by the test suite.
 */
export class LazySchemas {
  private readonly pending = new Set<() => unknown>();
  private warming: NodeJS.Immediate | undefined;

  /** A stand-in for what `compile` makes, compiling it on first use. */
  private lazily<F>(compile: () => F): () => F {
    let compiled: F | undefined;
    const get = (): F => {
      if (compiled === undefined) {
        compiled = compile();
        this.pending.delete(get);
      }
      return compiled;
    };
    this.pending.add(get);
    return get;
  }

  /**
   * Wraps a validator compiler. Fastify reads two properties of an Ajv validator besides calling
   * it — `errors` after a failed call, and `schemaEnv` (to pass the parent object, so that Ajv
   * can replace a root value it coerced) — so the stand-in forwards both.
   */
  validators<S>(compiler: FastifySchemaCompiler<S>): FastifySchemaCompiler<S> {
    return (route) => {
      type Validator = ReturnType<FastifySchemaCompiler<S>> & { errors?: unknown; schemaEnv?: unknown };
      const get = this.lazily(() => compiler(route) as Validator);
      const standIn = ((data: unknown, context?: unknown) =>
        (get() as (data: unknown, context?: unknown) => ReturnType<Validator>)(data, context)) as Validator;
      Object.defineProperties(standIn, {
        errors: { get: () => get().errors },
        schemaEnv: { get: () => get().schemaEnv },
      });
      return standIn;
    };
  }

  /** Fastify's own response serializer factory (fast-json-stringify), compiling lazily. */
  serializers(): SerializerFactory {
    const buildSerializer = SerializerSelector();
    return (externalSchemas, options) => {
      const compiler = buildSerializer(externalSchemas, options);
      return (route) => {
        const get = this.lazily(() => compiler(route));
        return (data) => get()(data);
      };
    };
  }

  /** Compiles, one per turn of the event loop, every schema not compiled yet. */
  warm(): void {
    if (this.warming) return;
    const next = () => {
      const [get] = this.pending;
      if (!get) {
        this.warming = undefined;
        return;
      }
      get();
      this.warming = setImmediate(next);
      this.warming.unref();
    };
    next();
  }

  /** Stops warming (the app is closing). */
  stop(): void {
    if (this.warming) clearImmediate(this.warming);
    this.warming = undefined;
  }
}
