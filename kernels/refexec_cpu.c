/* refexec_cpu: the reference executor on a CPU backend, so that its graph semantics (reading, streams,
 * dependency tracking, collective instances, timing records) are tested where no GPU is (issue 17).
 *
 *   refexec_cpu GRAPH [--warmup 0] [--reps 3] [--time-scale 1] [-o FILE]
 *
 * The scheduling core is refexec.cu's own (refexec_sched.c); only the four verbs differ. A stream is a thread
 * with a queue of commands, as a CUDA stream is a queue the host fills without waiting: "wait for event E",
 * "record E", "sleep D" (a kernel), "meet" (the rendezvous of one collective instance: every member's stream
 * arrives before any goes on, as NCCL's kernels do). Events carry generations, so that a wait refers to the
 * latest record issued before it, as cudaStreamWaitEvent does, and a wait on an event never recorded returns
 * at once. A task's kernels sleep for its pred_s (hetsim's prediction, split evenly over a compute task's ops)
 * times --time-scale: a graph with hand-set pred_s has a makespan one can derive by hand.
 * Records, as refexec's: {"kind": "refexec_task", "task", "rank", "task_kind", "stream", "t_med", "t_min",
 * "t_max", "start_med", "pred_s"} (start_med: the task's start after the step's, which only this backend
 * prints) and {"kind": "refexec_step", "t_med", "t_min", "t_max", "reps", "pred_s"}. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph_reader.h"
#include "refexec_sched.h"

enum cmd_kind { C_WAIT, C_RECORD, C_SLEEP, C_MEET, C_STOP };
struct cmd {
	enum cmd_kind k;
	size_t ev;          /* wait, record */
	unsigned long gen;  /* wait: the generation to wait for; record: the one it completes */
	double dur;         /* sleep, seconds */
	size_t meet;        /* meet: instance rendezvous index */
};
struct stream {
	pthread_t th;
	struct cmd *q;
	size_t n, cap, head;
};
struct event {
	unsigned long issued, done; /* generations: records enqueued, records reached */
	double t;                   /* when the latest one was reached (seconds, monotonic) */
};
struct meet {
	int need, arrived;
};

/* One lock and one condition for everything: streams are few, and a simple design is easy to trust. */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static hsg_graph G;
static struct stream *S; /* [nranks * HSG_S_COUNT] */
static struct event *E;  /* task start and end [2 * ntasks], step start and end per rank [2 * nranks], one join
			  * per stream [nranks * HSG_S_COUNT]: an event is recorded on one stream only, so its
			  * generations complete in order */
static struct meet *M;
static size_t nmeet, capmeet;
static double tscale = 1;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q) {
		fprintf(stderr, "refexec_cpu: out of memory\n");
		exit(1);
	}
	return q;
}

static struct stream *stream_of(size_t ti)
{
	const hsg_task *t = &G.tasks[ti];
	return &S[(size_t)hsg_rank_index(&G, t->rank) * HSG_S_COUNT + t->stream];
}

/* Enqueue (the host side; returns at once). Called with mu held. */
static void push(struct stream *s, struct cmd c)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->q = xrealloc(s->q, s->cap * sizeof *s->q);
	}
	s->q[s->n++] = c;
	pthread_cond_broadcast(&cv);
}

static void enq_record(struct stream *s, size_t ev)
{
	struct cmd c = {C_RECORD, ev, ++E[ev].issued, 0, 0};
	push(s, c);
}

static void enq_wait(struct stream *s, size_t ev)
{
	struct cmd c = {C_WAIT, ev, E[ev].issued, 0, 0};
	push(s, c);
}

static void *stream_main(void *arg)
{
	struct stream *s = arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (s->head == s->n)
			pthread_cond_wait(&cv, &mu);
		struct cmd c = s->q[s->head];
		if (c.k == C_STOP)
			break;
		switch (c.k) {
		case C_WAIT:
			while (E[c.ev].done < c.gen)
				pthread_cond_wait(&cv, &mu);
			break;
		case C_RECORD:
			E[c.ev].t = now();
			E[c.ev].done = c.gen;
			pthread_cond_broadcast(&cv);
			break;
		case C_SLEEP: {
			pthread_mutex_unlock(&mu);
			struct timespec ts = {(time_t)c.dur, (long)((c.dur - (double)(time_t)c.dur) * 1e9)};
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
			pthread_mutex_lock(&mu);
			break;
		}
		case C_MEET:
			M[c.meet].arrived++;
			pthread_cond_broadcast(&cv);
			while (M[c.meet].arrived < M[c.meet].need)
				pthread_cond_wait(&cv, &mu);
			break;
		case C_STOP: break;
		}
		s->head++;
	}
	pthread_mutex_unlock(&mu);
	return NULL;
}

/* The CPU backend's verbs (refexec_sched.h); the scheduler calls them with mu not held. */
static void be_wait(void *ctx, size_t ti, size_t dep)
{
	pthread_mutex_lock(&mu);
	enq_wait(stream_of(ti), 2 * dep + 1);
	pthread_mutex_unlock(&mu);
}

static void be_record(void *ctx, size_t ti, int end)
{
	pthread_mutex_lock(&mu);
	enq_record(stream_of(ti), 2 * ti + (size_t)end);
	pthread_mutex_unlock(&mu);
}

static double pred(size_t ti)
{
	double p = G.tasks[ti].pred_s;
	return p > 0 ? p * tscale : 0;
}

static void be_op(void *ctx, size_t ti, unsigned k)
{
	struct cmd c = {C_SLEEP, 0, 0, pred(ti) / G.tasks[ti].op_count, 0};
	pthread_mutex_lock(&mu);
	push(stream_of(ti), c);
	pthread_mutex_unlock(&mu);
}

static void be_inst(void *ctx, const size_t *mem, int n)
{
	pthread_mutex_lock(&mu);
	if (nmeet == capmeet) {
		capmeet = capmeet ? 2 * capmeet : 64;
		M = xrealloc(M, capmeet * sizeof *M);
	}
	M[nmeet].need = n, M[nmeet].arrived = 0;
	for (int i = 0; i < n; i++) {
		struct cmd meet = {C_MEET, 0, 0, 0, nmeet};
		struct cmd sl = {C_SLEEP, 0, 0, pred(mem[i]), 0};
		push(stream_of(mem[i]), meet);
		push(stream_of(mem[i]), sl);
	}
	nmeet++;
	pthread_mutex_unlock(&mu);
}

static const char *arg(int argc, char **argv, const char *k)
{
	for (int i = 1; i < argc - 1; i++)
		if (strcmp(argv[i], k) == 0)
			return argv[i + 1];
	return NULL;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_d);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
		printf("usage: refexec_cpu GRAPH [--warmup 0] [--reps 3] [--time-scale 1] [-o FILE]\n");
		return argc < 2 ? 2 : 0;
	}
	int warmup = arg(argc, argv, "--warmup") ? atoi(arg(argc, argv, "--warmup")) : 0;
	int reps = arg(argc, argv, "--reps") ? atoi(arg(argc, argv, "--reps")) : 3;
	tscale = arg(argc, argv, "--time-scale") ? atof(arg(argc, argv, "--time-scale")) : 1;
	if (reps < 1 || warmup < 0 || !(tscale >= 0)) {
		fprintf(stderr, "refexec_cpu: --reps must be >= 1, --warmup >= 0 and --time-scale >= 0\n");
		return 2;
	}
	char msg[1024];
	if (hsg_read_file(argv[1], &G, msg, sizeof msg)) {
		fprintf(stderr, "refexec_cpu: %s\n", msg);
		return 2;
	}
	hsr_sched sch;
	if (hsr_sched_init(&sch, &G, argv[1], msg, sizeof msg)) {
		fprintf(stderr, "refexec_cpu: %s\n", msg);
		return 2;
	}
	FILE *out = stdout;
	const char *op = arg(argc, argv, "-o");
	if (op && !(out = fopen(op, "w"))) {
		fprintf(stderr, "refexec_cpu: %s: %s\n", op, strerror(errno));
		return 2;
	}
	size_t nstreams = (size_t)G.nranks * HSG_S_COUNT, ev_step = 2 * G.ntasks, ev_join = ev_step + 2 * (size_t)G.nranks;
	S = calloc(nstreams, sizeof *S);
	E = calloc(ev_join + nstreams + 1, sizeof *E);
	double *tt = malloc(sizeof(double) * (G.ntasks * (size_t)reps + 1));
	double *ts = malloc(sizeof(double) * (G.ntasks * (size_t)reps + 1));
	double *st = malloc(sizeof(double) * (size_t)reps), *tmp = malloc(sizeof(double) * (size_t)reps);
	if (!S || !E || !tt || !ts || !st || !tmp) {
		fprintf(stderr, "refexec_cpu: out of memory\n");
		return 1;
	}
	for (size_t i = 0; i < nstreams; i++)
		if (pthread_create(&S[i].th, NULL, stream_main, &S[i])) {
			fprintf(stderr, "refexec_cpu: cannot start a stream thread\n");
			return 1;
		}
	static const hsr_backend be = {NULL, be_wait, be_record, be_op, be_inst};
	for (int rep = -warmup; rep < reps; rep++) {
		/* the step starts on each rank's compute stream; the other streams wait for it (as refexec.cu) */
		pthread_mutex_lock(&mu);
		for (int r = 0; r < G.nranks; r++) {
			struct stream *c = &S[(size_t)r * HSG_S_COUNT];
			enq_record(c, ev_step + 2 * (size_t)r);
			for (int s = 1; s < HSG_S_COUNT; s++)
				enq_wait(c + s, ev_step + 2 * (size_t)r);
		}
		pthread_mutex_unlock(&mu);
		if (hsr_run_step(&sch, &be, msg, sizeof msg)) {
			fprintf(stderr, "refexec_cpu: %s\n", msg);
			return 1;
		}
		/* join: the compute stream waits for the others, then records the step's end */
		pthread_mutex_lock(&mu);
		for (int r = 0; r < G.nranks; r++) {
			struct stream *c = &S[(size_t)r * HSG_S_COUNT];
			for (int s = 1; s < HSG_S_COUNT; s++) {
				size_t j = ev_join + (size_t)r * HSG_S_COUNT + (size_t)s; /* one join event per stream */
				enq_record(c + s, j);
				enq_wait(c, j);
			}
			enq_record(c, ev_step + 2 * (size_t)r + 1);
		}
		/* the host synchronises: every rank's end event reached */
		for (int r = 0; r < G.nranks; r++) {
			struct event *e = &E[ev_step + 2 * (size_t)r + 1];
			while (e->done < e->issued)
				pthread_cond_wait(&cv, &mu);
		}
		double worst = 0;
		for (int r = 0; r < G.nranks; r++) {
			double d = E[ev_step + 2 * (size_t)r + 1].t - E[ev_step + 2 * (size_t)r].t;
			worst = d > worst ? d : worst;
		}
		if (rep >= 0) {
			st[rep] = worst;
			for (size_t t = 0; t < G.ntasks; t++) {
				int r = hsg_rank_index(&G, G.tasks[t].rank);
				tt[t * (size_t)reps + (size_t)rep] = E[2 * t + 1].t - E[2 * t].t;
				ts[t * (size_t)reps + (size_t)rep] = E[2 * t].t - E[ev_step + 2 * (size_t)r].t;
			}
		}
		pthread_mutex_unlock(&mu);
	}
	pthread_mutex_lock(&mu);
	for (size_t i = 0; i < nstreams; i++) {
		struct cmd c = {C_STOP, 0, 0, 0, 0};
		push(&S[i], c);
	}
	pthread_mutex_unlock(&mu);
	for (size_t i = 0; i < nstreams; i++)
		pthread_join(S[i].th, NULL);
	fprintf(out, "{\"kind\": \"info\", \"tool\": \"refexec_cpu\", \"backend\": \"cpu-sleep\", \"graph\": \"%s\", "
		     "\"ranks\": %d, \"tasks\": %zu, \"time_scale\": %g}\n", argv[1], G.nranks, G.ntasks, tscale);
	for (size_t t = 0; t < G.ntasks; t++) {
		const hsg_task *k = &G.tasks[t];
		memcpy(tmp, tt + t * (size_t)reps, sizeof(double) * (size_t)reps);
		double med = median(tmp, reps), lo = tmp[0], hi = tmp[reps - 1];
		memcpy(tmp, ts + t * (size_t)reps, sizeof(double) * (size_t)reps);
		fprintf(out, "{\"kind\": \"refexec_task\", \"task\": %zu, \"rank\": %d, \"task_kind\": \"%s\", \"stream\": "
			     "\"%s\", \"what\": \"%s\", \"t_med\": %.6f, \"t_min\": %.6f, \"t_max\": %.6f, \"start_med\": %.6f, "
			     "\"pred_s\": %.9g, \"reps\": %d}\n",
			t, k->rank, hsg_task_kind_names[k->kind], hsg_stream_names[k->stream], hsg_what_names[k->what], med,
			lo, hi, median(tmp, reps), k->pred_s, reps);
	}
	memcpy(tmp, st, sizeof(double) * (size_t)reps);
	double med = median(tmp, reps);
	fprintf(out, "{\"kind\": \"refexec_step\", \"t_med\": %.6f, \"t_min\": %.6f, \"t_max\": %.6f, \"reps\": %d, "
		     "\"warmup\": %d, \"pred_s\": %.9g, \"ranks\": %d, \"tasks\": %zu}\n",
		med, tmp[0], tmp[reps - 1], reps, warmup, G.step_pred_s, G.nranks, G.ntasks);
	if (out != stdout && fclose(out)) {
		fprintf(stderr, "refexec_cpu: %s: %s\n", op, strerror(errno));
		return 2;
	}
	fprintf(stderr, "refexec_cpu: step %.6f s (median of %d)\n", med, reps);
	free(tt);
	free(ts);
	free(st);
	free(tmp);
	for (size_t i = 0; i < nstreams; i++)
		free(S[i].q);
	free(S);
	free(E);
	free(M);
	hsr_sched_free(&sch);
	hsg_free(&G);
	return 0;
}
