import { Arg, Ctx, Field, Int, Mutation, ObjectType, Resolver } from 'type-graphql';
import { GraphQLUpload } from 'graphql-upload-minimal';
import type { FileUpload } from 'graphql-upload-minimal';
import type { Context } from '../../common/request/context';
import { TokenIdScalar } from '../../common/scalars';
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

@Resolver()
export class ImportResolver {
  @Mutation(() => ImportResult, {
    description:
      'Imports a CSV of assets into a collection, all or nothing (columns: name, description, image_url, animation_url, ' +
      'external_link, metadata, owner, token_id). Multipart requests need the header apollo-require-preflight: true.',
  })
  async importAssets(
    @Arg('collectionId', () => String, { description: 'Collection id (UUID) or contract address' }) collectionId: string,
    @Arg('file', () => GraphQLUpload) file: Promise<FileUpload>,
    @Ctx() ctx: Context,
  ): Promise<ImportResult> {
    const upload = await file;
    const summary = await importAssets(ctx, collectionId, upload.createReadStream());
    const range = summary.count ? ` (token ids ${summary.firstTokenId} to ${summary.lastTokenId})` : '';
    return {
      data: { count: summary.count, firstTokenId: summary.firstTokenId, lastTokenId: summary.lastTokenId },
      message: `Imported ${summary.count} asset${summary.count === 1 ? '' : 's'} into ${summary.collection.name}${range}.`,
    };
  }
}
