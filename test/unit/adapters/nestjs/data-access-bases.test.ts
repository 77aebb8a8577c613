import { Repository, TreeRepository, MongoRepository } from 'typeorm';
import { isDataAccessBase } from '../../../../src/adapters/nestjs/data-access-bases';

describe('isDataAccessBase', () => {
  it("knows TypeORM's repository bases, which register nothing", () => {
    expect(isDataAccessBase(Repository)).toBe(true);
    expect(isDataAccessBase(TreeRepository)).toBe(true);
    expect(isDataAccessBase(MongoRepository)).toBe(true);
  });

  it("keeps another library's class of the same name a collected base", () => {
    // A class called Repository without an ORM's methods (a git client's, say) may be registered by its library.
    class Repository {
      clone(): void {}
    }
    expect(isDataAccessBase(Repository)).toBe(false);
  });

  it('reads the methods as data only: a getter is not run', () => {
    const get = jest.fn(() => () => undefined);
    class Repository {}
    for (const method of ['createQueryBuilder', 'findOne', 'save'])
      Object.defineProperty(Repository.prototype, method, { get });
    expect(isDataAccessBase(Repository)).toBe(false);
    expect(get).not.toHaveBeenCalled();
  });

  it('says nothing of an unrelated library base', () => {
    class WorkerHost {
      process(): void {}
    }
    expect(isDataAccessBase(WorkerHost)).toBe(false);
  });
});
