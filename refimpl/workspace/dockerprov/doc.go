// Package dockerprov is the Docker provider of the data plane (SPEC 5.1,
// 5.2): one Provider implements ports.Instances and ports.Storage on a
// Docker engine through the moby client (github.com/moby/moby/client, the
// SDK testcontainers-go uses; it negotiates the API version down, so a
// 20.10 engine at API 1.41 works).
//
// Objects (SPEC 1.4):
//
//   - workspace container ws-{id}, the volume ws-{id}-home mounted at
//     /home/coder; its image is Start's image_ref (Config.ImageOverride for
//     tests). When the image exposes the agent port (8080/tcp) the port is
//     published on Config.PublishIP and Start waits for GET /healthz;
//   - storage-job container ws-{id}-storage-job from Config.StorageJobImage
//     (cmd/storage-job), the volume at /data, user 1000:1000, its settings
//     in the environment (JOB_MODE, ARCHIVE_URL=s3://bucket/{key},
//     S3_ENDPOINT, S3_ACCESS_KEY, S3_SECRET_KEY, S3_SECURE); its exit status
//     maps back to an error code with archive.CodeOfExit;
//   - file helper containers, created and never started, through which
//     WriteFile and ReadFiles copy bytes into and out of a volume.
//
// Every object carries the labels {prefix}managed={ManagedValue},
// {prefix}workspace={id} and {prefix}role (workspace, storage-job, files);
// the prefix defaults to "org.wsconverge.". List and ListVolumes are one
// listing each, filtered on the managed label alone (the daemon ANDs
// several label filters), sorted out in code. Cleanup removes everything
// with the managed label.
//
// Errors are *contracts.ProviderError: a daemon that does not answer is
// DOCKER_UNREACHABLE (context {"endpoint":"docker"}); the codes of SPEC 1.5
// otherwise, plus CodeStorageJobFailed for a job that failed without a code
// of its own. A volume is never created implicitly: the workspace's volume
// is ws-{id}-home with the managed label, and every container that mounts
// one is created only after that volume was found (VOLUME_NOT_FOUND
// otherwise; one of that name without the label is left alone). The
// engine makes a missing named volume for a mount, so a volume removed
// between that check and the create (a fault, an operator) would come back
// empty and unlabelled: each such container is checked once created, and
// when its volume is not the provider's, it and that stand-in are removed
// and the answer is VOLUME_NOT_FOUND, so no storage job archives an empty
// stand-in and no workspace starts on one (DR627).
//
// How the storage job reaches S3 is the caller's choice (Config's
// JobNetwork, JobExtraHosts and S3.Endpoint, see Config); the tests run
// jobs on the host network so the endpoint MinIO publishes on the host
// works unchanged.
package dockerprov
