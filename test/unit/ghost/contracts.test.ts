/**
 * The contract a never-called method fulfils (src/ghost/contracts.ts), read from TypeScript sources shaped like
 * domain-driven-hexagon's, where a trial found five of seven never-called methods required by a port: `paths`
 * aliases in tsconfig.json (with comments), an `index.ts` of `export *`, an abstract base implementing a generic port
 * over several lines, an interface extending another, a mapper interface.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  contractWords,
  memberWords,
  withContracts,
  withMethodContracts,
  type MemberFinding,
} from '../../../src/ghost/cli/members';
import { actOn } from '../../../src/ghost/cli/ledger';
import type { LedgerAnswer } from '../../../src/ghost/ledger/answer';
import { contractOf, contractReader } from '../../../src/ghost/contracts';

let root: string;

function write(file: string, text: string): void {
  const at = path.join(root, file);
  fs.mkdirSync(path.dirname(at), { recursive: true });
  fs.writeFileSync(at, text);
}

/** The 1-based line of the first line of `file` containing `needle`. */
function lineOf(file: string, needle: string): number {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(needle));
  if (i === -1) throw new Error(`${needle} not in ${file}`);
  return i + 1;
}

beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'diag-contracts-'));
  write(
    'tsconfig.json',
    `{
  // as Nest's CLI writes it
  "compilerOptions": {
    "baseUrl": "./",
    /* aliases */
    "paths": { "@libs/*": ["src/libs/*"], "@modules/*": ["src/modules/*"], },
  },
}
`,
  );
  write('src/libs/ddd/index.ts', "export * from './mapper.interface';\nexport * from './repository.port';\n");
  write(
    'src/libs/ddd/repository.port.ts',
    `import { Option } from 'oxide.ts';

export type OrderBy = { field: string | true; param: 'asc' | 'desc' };

export interface RepositoryPort<Entity> {
  insert(entity: Entity | Entity[]): Promise<void>;
  findOneById(id: string): Promise<Option<Entity>>;
  findAll(): Promise<Entity[]>;
  transaction<T>(handler: () => Promise<T>): Promise<T>;
}
`,
  );
  write(
    'src/libs/ddd/mapper.interface.ts',
    `export interface Mapper<
  DomainEntity extends { id: string },
  DbRecord,
  Response = any,
> {
  toPersistence(entity: DomainEntity): DbRecord;
  toResponse(entity: DomainEntity): Response;
}
`,
  );
  write(
    'src/libs/db/sql-repository.base.ts',
    `import { Mapper } from '@libs/ddd';
import { RepositoryPort as Port } from '@libs/ddd';

export abstract class SqlRepositoryBase<
  Aggregate extends { id: string },
  DbModel extends Record<string, unknown>,
> implements Port<Aggregate>
{
  protected abstract tableName: string;
  protected abstract schemaName(): string;

  async findAll(): Promise<Aggregate[]> {
    return [];
  }

  async purge(): Promise<void> {}
}
`,
  );
  write(
    'src/modules/user/database/user.repository.port.ts',
    `import { RepositoryPort } from '@libs/ddd';
import { UserEntity } from '../domain/user.entity';

export interface UserRepositoryPort extends RepositoryPort<UserEntity> {
  findOneByEmail(email: string): Promise<UserEntity>;
}
`,
  );
  write(
    'src/modules/user/database/user.repository.ts',
    `import { SqlRepositoryBase } from '@libs/db/sql-repository.base';
import { UserRepositoryPort } from './user.repository.port';

export class UserRepository
  extends SqlRepositoryBase<UserEntity, UserModel>
  implements UserRepositoryPort
{
  protected tableName = 'users';
  protected schemaName(): string {
    return 'public';
  }

  async updateAddress(user: UserEntity): Promise<void> {}

  async findOneByEmail(email: string): Promise<UserEntity> {
    return undefined as never;
  }

  async insert(entity: UserEntity | UserEntity[]): Promise<void> {}
}
`,
  );
  write(
    'src/modules/user/user.mapper.ts',
    `import { Mapper } from '@libs/ddd';

export class UserMapper implements Mapper<UserEntity, UserModel, UserResponseDto> {
  toPersistence(entity: UserEntity): UserModel {
    return {} as UserModel;
  }

  toResponse(entity: UserEntity): UserResponseDto {
    return {} as UserResponseDto;
  }
}
`,
  );
});

afterAll(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const at = (file: string, needle: string) => ({ file, line: lineOf(file, needle) });

describe('the contract a never-called method fulfils', () => {
  it("finds a port's member through an interface's extends, an alias in tsconfig paths and an index of export *", () => {
    const repo = 'src/modules/user/database/user.repository.ts';
    expect(contractOf(at(repo, 'findOneByEmail('), 'findOneByEmail', root)).toEqual({
      kind: 'interface',
      name: 'UserRepositoryPort',
      file: 'src/modules/user/database/user.repository.port.ts',
      line: lineOf('src/modules/user/database/user.repository.port.ts', 'findOneByEmail('),
    });
    // declared by the port UserRepositoryPort extends
    expect(contractOf(at(repo, 'async insert('), 'insert', root)).toEqual({
      kind: 'interface',
      name: 'RepositoryPort',
      file: 'src/libs/ddd/repository.port.ts',
      line: lineOf('src/libs/ddd/repository.port.ts', 'insert('),
    });
  });

  it('finds what an abstract base implements, imported under another name, over a declaration of several lines', () => {
    const base = 'src/libs/db/sql-repository.base.ts';
    expect(contractOf(at(base, 'async findAll('), 'findAll', root)).toMatchObject({
      name: 'RepositoryPort',
      line: lineOf('src/libs/ddd/repository.port.ts', 'findAll('),
    });
  });

  it("finds a base class's abstract method, and a mapper interface with type parameters over several lines", () => {
    const repo = 'src/modules/user/database/user.repository.ts';
    expect(contractOf(at(repo, 'protected schemaName'), 'schemaName', root)).toEqual({
      kind: 'abstract class',
      name: 'SqlRepositoryBase',
      file: 'src/libs/db/sql-repository.base.ts',
      line: lineOf('src/libs/db/sql-repository.base.ts', 'abstract schemaName'),
    });
    expect(contractOf(at('src/modules/user/user.mapper.ts', 'toResponse('), 'toResponse', root)).toMatchObject({
      kind: 'interface',
      name: 'Mapper',
      file: 'src/libs/ddd/mapper.interface.ts',
    });
  });

  it('follows a named re-export under another name', () => {
    write('src/libs/ports/index.ts', "export { type RepositoryPort as StorePort } from '../ddd/repository.port';\n");
    write(
      'src/modules/store/store.repository.ts',
      `import { StorePort } from '@libs/ports';\n\nexport class StoreRepository implements StorePort<Item> {\n  async findAll(): Promise<Item[]> {\n    return [];\n  }\n}\n`,
    );
    expect(contractOf(at('src/modules/store/store.repository.ts', 'findAll('), 'findAll', root)).toMatchObject({
      name: 'RepositoryPort',
      file: 'src/libs/ddd/repository.port.ts',
    });
  });

  it("says nothing of a method that is the class's own, nor where the source cannot be read", () => {
    const repo = 'src/modules/user/database/user.repository.ts';
    expect(contractOf(at(repo, 'updateAddress('), 'updateAddress', root)).toBeUndefined();
    expect(contractOf(at('src/libs/db/sql-repository.base.ts', 'purge('), 'purge', root)).toBeUndefined();
    expect(contractOf({ file: 'src/missing.ts', line: 3 }, 'findAll', root)).toBeUndefined();
    expect(contractOf({ file: 'dist/user.repository.js', line: 3 }, 'findAll', root)).toBeUndefined();
  });
});

describe("in the CLI's words", () => {
  const finding = (bean: string, method: string, file: string, needle: string): MemberFinding => ({
    kind: 'never-touched-method',
    key: `${bean}#${method}`,
    bean,
    method,
    source: at(file, needle),
  });

  it('says to remove a method from its contract too, unless another implementation of it is called', () => {
    write(
      'src/modules/wallet/wallet.mapper.ts',
      `import { Mapper } from '@libs/ddd';

export class WalletMapper implements Mapper<WalletEntity, WalletModel> {
  toPersistence(entity: WalletEntity): WalletModel {
    return {} as WalletModel;
  }

  toResponse(entity: WalletEntity): unknown {
    return {};
  }
}
`,
    );
    const find = contractReader(root);
    const repo = 'src/modules/user/database/user.repository.ts';
    const [byEmail, address, userResponse] = withContracts(
      [
        finding('UserRepository', 'findOneByEmail', repo, 'findOneByEmail('),
        finding('UserRepository', 'updateAddress', repo, 'updateAddress('),
        finding('UserMapper', 'toResponse', 'src/modules/user/user.mapper.ts', 'toResponse('),
      ],
      // WalletMapper's toResponse was called: the interface's member is still needed
      [
        {
          bean: 'WalletMapper',
          method: 'toResponse',
          source: at('src/modules/wallet/wallet.mapper.ts', 'toResponse('),
        },
      ],
      find,
    );
    const port = `src/modules/user/database/user.repository.port.ts:${lineOf('src/modules/user/database/user.repository.port.ts', 'findOneByEmail(')}`;
    expect(memberWords(byEmail!)).toBe(
      `method UserRepository.findOneByEmail never called in any process (${repo}:${lineOf(repo, 'findOneByEmail(')}); ` +
        `declared by interface UserRepositoryPort (${port}): remove it there too`,
    );
    expect(address!.contract).toBeUndefined();
    expect(memberWords(address!)).not.toContain('declared by');
    // The closing advice: what goes, what goes with its contract's member, what stays.
    const members = [byEmail!, address!, userResponse!].map((member) => ({ bean: member.key, member }));
    expect(actOn([{ bean: 'Logger', registration: 'only' }, ...members])).toBe(
      'Delete them; for Logger, only its registration; for the method a contract declares, remove its member there ' +
        'too; 1 method stays while its contract requires it (see its line)',
    );
    expect(actOn([members[1]!])).toBe('Delete it');
    // Where the contracts could not be read, no method is known not to have one: the advice says to look first.
    expect(actOn([members[1]!], true)).toBe(
      'Delete it; before deleting a method, look whether an interface or abstract class declares it (not read here)',
    );
    expect(actOn([{ bean: 'Logger', registration: 'only' }], true)).toBe('Remove its registration');
    expect(contractWords(userResponse!.contract)).toBe(
      `; declared by interface Mapper (src/libs/ddd/mapper.interface.ts:${lineOf('src/libs/ddd/mapper.interface.ts', 'toResponse(')}), ` +
        'which WalletMapper also implements, called there: it stays while Mapper requires it',
    );

    // --format json: the same contracts on the answer's methods, the rest of the answer as it was
    const answer = {
      service: 'ddh',
      beans: [
        {
          name: 'UserRepository',
          verdict: 'in-use',
          methods: [
            { name: 'findOneByEmail', verdict: 'never-touched' },
            { name: 'updateAddress', verdict: 'never-touched' },
          ],
        },
        { name: 'UserMapper', verdict: 'in-use', methods: [{ name: 'toResponse', verdict: 'never-touched' }] },
        { name: 'Logger', verdict: 'never-touched' },
      ],
    } as unknown as LedgerAnswer;
    const contracts = new Map([byEmail!, userResponse!].map((f) => [f.key, f.contract!]));
    const json = JSON.parse(JSON.stringify(withMethodContracts(answer, contracts))) as LedgerAnswer;
    const methods = json.beans.flatMap((b) => (b.methods ?? []).map((m) => ({ bean: b.name, ...m })));
    expect(methods).toEqual([
      {
        bean: 'UserRepository',
        name: 'findOneByEmail',
        verdict: 'never-touched',
        contract: {
          kind: 'interface',
          name: 'UserRepositoryPort',
          file: port.split(':')[0],
          line: Number(port.split(':')[1]),
        },
      },
      { bean: 'UserRepository', name: 'updateAddress', verdict: 'never-touched' },
      {
        bean: 'UserMapper',
        name: 'toResponse',
        verdict: 'never-touched',
        contract: expect.objectContaining({ name: 'Mapper', calledIn: ['WalletMapper'] }),
      },
    ]);
    expect(json.beans[2]).toEqual({ name: 'Logger', verdict: 'never-touched' });
    expect(withMethodContracts(answer, new Map())).toBe(answer);
  });
});
