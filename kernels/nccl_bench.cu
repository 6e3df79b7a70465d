/* nccl_bench: NCCL all-reduce, all-gather, reduce-scatter, all-to-all, broadcast and send/recv over a range of
 * sizes, printed in nccl-tests' table format (so `hetsim calib import-nccl-tests` reads it) and, with
 * --json FILE, as JSON lines.
 *
 *   nccl_bench [--op all_reduce|all_gather|reduce_scatter|alltoall|broadcast|sendrecv] [-b 8] [-e 256M] [-f 2]
 *              [--warmup 5] [--iters 20] [--gpus N] [--json FILE]
 *
 * One process drives every visible GPU (ncclCommInitAll), or, built with MPI=1 and started by mpirun, one rank
 * per GPU across nodes (the unique id broadcast over MPI, each rank on its node-local GPU). Sizes as nccl-tests
 * counts them: all-gather the gathered output, reduce-scatter the whole input, all-to-all what a rank sends.
 * Data is float, random, not validated (#wrong is N/A). Time: the slowest GPU's event time over --iters
 * back-to-back calls, divided by --iters. busbw = algbw x 2(n-1)/n (all-reduce), (n-1)/n (all-gather,
 * reduce-scatter, all-to-all), 1 (broadcast, send/recv). One collective per run: a log per collective. */
#include <nccl.h>
#include <string.h>
#include <unistd.h>
#ifdef HSK_MPI
#include <mpi.h>
#endif

#include "common.h"

#define CN(x)                                                                                                      \
	do {                                                                                                       \
		ncclResult_t r_ = (x);                                                                             \
		if (r_ != ncclSuccess) {                                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_));        \
			exit(1);                                                                                   \
		}                                                                                                  \
	} while (0)

enum { C_AR, C_AG, C_RS, C_A2A, C_BC, C_SR, C_N };
static const char *const cname[C_N] = {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"};

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	switch (*end) {
	case 'K': case 'k': v *= 1024; break;
	case 'M': case 'm': v *= 1024 * 1024; break;
	case 'G': case 'g': v *= 1024.0 * 1024 * 1024; break;
	}
	return (size_t)v;
}

struct gpu {
	int dev;
	ncclComm_t comm;
	cudaStream_t s;
	float *send, *recv;
	cudaEvent_t e0, e1;
};

/* One call of collective `c` over `count` elements (as nccl-tests counts them) on every local GPU. */
static void issue(struct gpu *g, int nlocal, int nranks, int rank0, int c, size_t count, int inplace)
{
	CN(ncclGroupStart());
	for (int i = 0; i < nlocal; i++) {
		int rank = rank0 + i;
		float *sb = g[i].send, *rb = inplace ? g[i].send : g[i].recv;
		size_t per = count / nranks;
		switch (c) {
		case C_AR: CN(ncclAllReduce(sb, rb, count, ncclFloat, ncclSum, g[i].comm, g[i].s)); break;
		case C_AG: CN(ncclAllGather(inplace ? rb + per * rank : sb, rb, per, ncclFloat, g[i].comm, g[i].s)); break;
		case C_RS: CN(ncclReduceScatter(sb, inplace ? sb + per * rank : rb, per, ncclFloat, ncclSum, g[i].comm, g[i].s)); break;
		case C_BC: CN(ncclBroadcast(sb, rb, count, ncclFloat, 0, g[i].comm, g[i].s)); break;
		case C_A2A:
			for (int p = 0; p < nranks; p++) {
				CN(ncclSend(sb + per * p, per, ncclFloat, p, g[i].comm, g[i].s));
				CN(ncclRecv((inplace ? sb : rb) + per * p, per, ncclFloat, p, g[i].comm, g[i].s));
			}
			break;
		case C_SR: {
			int to = (rank + 1) % nranks, from = (rank - 1 + nranks) % nranks;
			CN(ncclSend(sb, count, ncclFloat, to, g[i].comm, g[i].s));
			CN(ncclRecv(inplace ? sb : rb, count, ncclFloat, from, g[i].comm, g[i].s));
			break;
		}
		}
	}
	CN(ncclGroupEnd());
}

static double timed(struct gpu *g, int nlocal, int nranks, int rank0, int c, size_t count, int inplace, int warmup,
		    int iters)
{
	for (int w = 0; w < warmup; w++)
		issue(g, nlocal, nranks, rank0, c, count, inplace);
	for (int i = 0; i < nlocal; i++) {
		CK(cudaSetDevice(g[i].dev));
		CK(cudaStreamSynchronize(g[i].s));
	}
#ifdef HSK_MPI
	MPI_Barrier(MPI_COMM_WORLD);
#endif
	for (int i = 0; i < nlocal; i++) {
		CK(cudaSetDevice(g[i].dev));
		CK(cudaEventRecord(g[i].e0, g[i].s));
	}
	for (int it = 0; it < iters; it++)
		issue(g, nlocal, nranks, rank0, c, count, inplace);
	double worst = 0;
	for (int i = 0; i < nlocal; i++) {
		CK(cudaSetDevice(g[i].dev));
		CK(cudaEventRecord(g[i].e1, g[i].s));
		CK(cudaEventSynchronize(g[i].e1));
		float ms;
		CK(cudaEventElapsedTime(&ms, g[i].e0, g[i].e1));
		if (ms > worst)
			worst = ms;
	}
#ifdef HSK_MPI
	MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
	return worst * 1e-3 / iters;
}

int main(int argc, char **argv)
{
	int rank0 = 0, nranks = 0, nlocal = 0, me = 0;
#ifdef HSK_MPI
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &me);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
#endif
	if (hsk_flag(argc, argv, "-h") || hsk_flag(argc, argv, "--help")) {
		printf("usage: nccl_bench [--op all_reduce|all_gather|reduce_scatter|alltoall|broadcast|sendrecv] "
		       "[-b 8] [-e 256M] [-f 2] [--warmup 5] [--iters 20] [--gpus N] [--json FILE]\n");
		return 0;
	}
	const char *op = hsk_arg(argc, argv, "--op");
	int c = -1;
	for (int i = 0; i < C_N; i++)
		if (strcmp(op ? op : "all_reduce", cname[i]) == 0)
			c = i;
	if (c < 0) {
		fprintf(stderr, "nccl_bench: --op %s: expected all_reduce, all_gather, reduce_scatter, alltoall, "
				"broadcast or sendrecv\n", op);
		return 2;
	}
	size_t minb = hsk_arg(argc, argv, "-b") ? parse_size(hsk_arg(argc, argv, "-b")) : 8;
	size_t maxb = hsk_arg(argc, argv, "-e") ? parse_size(hsk_arg(argc, argv, "-e")) : (256u << 20);
	int factor = hsk_arg(argc, argv, "-f") ? atoi(hsk_arg(argc, argv, "-f")) : 2;
	int warmup = hsk_arg(argc, argv, "--warmup") ? atoi(hsk_arg(argc, argv, "--warmup")) : 5;
	int iters = hsk_arg(argc, argv, "--iters") ? atoi(hsk_arg(argc, argv, "--iters")) : 20;
	if (minb < 4 || maxb < minb || factor < 2 || iters < 1 || warmup < 0) {
		fprintf(stderr, "nccl_bench: need 4 <= -b <= -e, -f >= 2, --iters >= 1\n");
		return 2;
	}
	int visible = 0;
	CK(cudaGetDeviceCount(&visible));
	struct gpu *g;
#ifdef HSK_MPI
	const char *lr = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
	if (!lr)
		lr = getenv("MPI_LOCALRANKID");
	if (!lr)
		lr = getenv("SLURM_LOCALID");
	nlocal = 1;
	rank0 = me;
	g = (struct gpu *)calloc(1, sizeof *g);
	g[0].dev = (lr ? atoi(lr) : me) % visible;
	ncclUniqueId id;
	if (me == 0)
		CN(ncclGetUniqueId(&id));
	MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
	CK(cudaSetDevice(g[0].dev));
	CN(ncclCommInitRank(&g[0].comm, nranks, id, me));
#else
	nlocal = hsk_arg(argc, argv, "--gpus") ? atoi(hsk_arg(argc, argv, "--gpus")) : visible;
	if (nlocal < 1 || nlocal > visible) {
		fprintf(stderr, "nccl_bench: --gpus %d: %d visible\n", nlocal, visible);
		return 2;
	}
	nranks = nlocal;
	g = (struct gpu *)calloc((size_t)nlocal, sizeof *g);
	int *devs = (int *)malloc(sizeof(int) * (size_t)nlocal);
	ncclComm_t *comms = (ncclComm_t *)malloc(sizeof(ncclComm_t) * (size_t)nlocal);
	for (int i = 0; i < nlocal; i++)
		devs[i] = i;
	CN(ncclCommInitAll(comms, nlocal, devs));
	for (int i = 0; i < nlocal; i++)
		g[i].dev = i, g[i].comm = comms[i];
	free(devs);
	free(comms);
#endif
	size_t maxcount = (maxb + 3) / 4 + (size_t)nranks;
	for (int i = 0; i < nlocal; i++) {
		CK(cudaSetDevice(g[i].dev));
		CK(cudaStreamCreateWithFlags(&g[i].s, cudaStreamNonBlocking));
		CK(cudaMalloc((void **)&g[i].send, maxcount * 4));
		CK(cudaMalloc((void **)&g[i].recv, maxcount * 4));
		hsk_fill(g[i].send, maxcount, HSK_FP32, 1.f, 21 + i, g[i].s);
		hsk_fill(g[i].recv, maxcount, HSK_FP32, 1.f, 51 + i, g[i].s);
		CK(cudaEventCreate(&g[i].e0));
		CK(cudaEventCreate(&g[i].e1));
	}
	hsk_out jo;
	int json = hsk_arg(argc, argv, "--json") != NULL && me == 0;
	if (json) {
		hsk_out_open(&jo, hsk_arg(argc, argv, "--json"));
		char extra[128];
		snprintf(extra, sizeof extra, "\"collective\": \"%s\", \"ranks\": %d, \"bootstrap\": \"%s\"", cname[c], nranks,
#ifdef HSK_MPI
			 "mpi"
#else
			 "ncclCommInitAll"
#endif
		);
		hsk_info(&jo, "nccl_bench", g[0].dev, argc, argv, extra);
	}
	int ver = 0;
	ncclGetVersion(&ver);
	char host[256] = "";
	gethostname(host, sizeof host - 1);
	if (me == 0) {
		printf("# nccl_bench (hetsim kernels/), nccl-tests' table format\n");
		printf("# nccl version: %d.%d.%d\n", ver / 10000, (ver % 10000) / 100, ver % 100);
		printf("# collective: %s (%s_perf, float %s)\n", cname[c], cname[c], c == C_AR || c == C_RS ? "sum" : "none");
		printf("# nThread 1 nGpus %d minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d iters: %d agg iters: 1 "
		       "validation: 0 graph: 0\n#\n# Using devices\n",
		       nlocal, minb, maxb, factor, warmup, iters);
	}
	for (int i = 0; i < nlocal; i++) {
		cudaDeviceProp p;
		CK(cudaGetDeviceProperties(&p, g[i].dev));
		printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] %s\n", rank0 + i, (int)getpid(), host, g[i].dev,
		       p.pciBusID, p.name);
	}
	if (me == 0) {
		printf("#\n#                                                              out-of-place                       in-place\n");
		printf("#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
		printf("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n");
	}
	double n = nranks, bsum = 0;
	int nrows = 0;
	double fac = c == C_AR ? 2 * (n - 1) / n : (c == C_AG || c == C_RS || c == C_A2A) ? (n - 1) / n : 1;
	for (size_t by = minb; by <= maxb; by *= factor) {
		size_t count = by / 4;
		count -= count % (size_t)nranks; /* divisible by the ranks, as nccl-tests rounds */
		if (count == 0)
			continue;
		size_t bytes = count * 4;
		double t = timed(g, nlocal, nranks, rank0, c, count, 0, warmup, iters);
		double ti = timed(g, nlocal, nranks, rank0, c, count, 1, warmup, iters);
		double alg = bytes / t / 1e9, algi = bytes / ti / 1e9;
		if (me == 0) {
			printf("%12zu  %12zu     float  %6s  %6d  %7.2f  %6.2f  %6.2f    N/A  %7.2f  %6.2f  %6.2f    N/A\n", bytes, count,
			       c == C_AR || c == C_RS ? "sum" : "none", c == C_BC ? 0 : -1, t * 1e6, alg, alg * fac, ti * 1e6, algi,
			       algi * fac);
			fflush(stdout);
		}
		if (json)
			hsk_rec(&jo, "nccl",
				", \"collective\": \"%s\", \"ranks\": %d, \"bytes\": %zu, \"count\": %zu, \"t\": %.9g, \"t_inplace\": %.9g, "
				"\"algbw_GBps\": %.6g, \"busbw_GBps\": %.6g, \"iters\": %d",
				cname[c], nranks, bytes, count, t, ti, alg, alg * fac, iters);
		bsum += alg * fac;
		nrows++;
	}
	if (me == 0) {
		printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g\n#\n", nrows ? bsum / nrows : 0);
	}
	if (json)
		hsk_out_close(&jo);
	for (int i = 0; i < nlocal; i++) {
		cudaSetDevice(g[i].dev);
		ncclCommDestroy(g[i].comm);
		cudaFree(g[i].send);
		cudaFree(g[i].recv);
	}
	free(g);
#ifdef HSK_MPI
	MPI_Finalize();
#endif
	return 0;
}
