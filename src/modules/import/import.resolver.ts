import { Readable } from 'node:stream';
import { GraphQLScalarType } from 'graphql';
import { Arg, Ctx, Field, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import { GraphQLUpload } from 'graphql-upload-minimal';
import type { FileUpload } from 'graphql-upload-minimal';
import type { Context } from '../../common/request/context';
import { TokenIdScalar } from '../../common/scalars';
import { BadRequestError } from '../../common/errors';
import { importAssets } from './import.service';

@ObjectType()
export class ImportData {
  @Field(() => Int, { description: 'Assets imported' })
  count: number;

  @Field(() => TokenIdScalar, { nullable: true, description: 'Lowest token id imported' })
  firstTokenId: string | null;

  @Field(() => TokenIdScalar, { nullable: true, description: 'Highest token id imported' })
  lastTokenId: string | null;
}

@ObjectType()
export class ImportResult {
  @Field(() => ImportData)
  data: ImportData;

  @Field(() => String, { description: 'One-line summary' })
  message: string;
}

/**
 * The `Upload` scalar of graphql-upload-minimal, with its refusals as BAD_REQUEST: type-graphql awaits a
 * promised argument before the resolver runs, so a file that the map names and the request lacks, or a
 * multipart body broken after `map` (busboy's "Malformed part header"), rejects there, outside the resolver.
 */
const UploadScalar = new GraphQLScalarType({
  ...GraphQLUpload.toConfig(),
  parseValue(value: unknown) {
    const file = Promise.resolve(GraphQLUpload.parseValue(value) as Promise<FileUpload>).catch((err: unknown) => {
      throw new BadRequestError(`the file cannot be read: ${(err as Error).message}`, [{ field: 'file', message: 'missing or cut short' }]);
    });
    file.catch(() => undefined); // handled where it is awaited; never an unhandled rejection
    return file;
  },
});

/** The file's stream; throws BAD_REQUEST when its part has already broken off (graphql-upload-minimal throws then). */
function fileStream(upload: FileUpload): Readable {
  try {
    return upload.createReadStream();
  } catch (err) {
    throw new BadRequestError(`the file broke off: ${(err as Error).message}`, [{ field: 'file', message: 'cut short' }]);
  }
}

@Resolver()
export class ImportResolver {
  @Mutation(() => ImportResult, {
    description:
      'Imports a CSV of assets into a collection, all or nothing (columns: name, description, image_url, animation_url, ' +
      'external_link, metadata, owner, token_id, token_uri). Multipart requests need the header apollo-require-preflight: true.',
  })
  async importAssets(
    @Arg('collectionId', () => String, { description: 'Collection id (UUID) or contract address' }) collectionId: string,
    @Arg('file', () => UploadScalar) file: Promise<FileUpload>,
    @Ctx() ctx: Context,
  ): Promise<ImportResult> {
    const stream = fileStream(await file);
    // A part that breaks off mid-way (a body cut short) fails the import with busboy's error: the request's fault.
    let broke: Error | undefined;
    stream.on('error', (err: Error) => (broke = err));
    const summary = await importAssets(ctx, collectionId, stream).catch((err: unknown) => {
      throw broke ? new BadRequestError(`the file broke off: ${broke.message}`, [{ field: 'file', message: 'cut short' }]) : err;
    });
    const range = summary.count ? ` (token ids ${summary.firstTokenId} to ${summary.lastTokenId})` : '';
    return {
      data: { count: summary.count, firstTokenId: summary.firstTokenId, lastTokenId: summary.lastTokenId },
      message: `Imported ${summary.count} asset${summary.count === 1 ? '' : 's'} into ${summary.collection.name}${range}.`,
    };
  }
}
