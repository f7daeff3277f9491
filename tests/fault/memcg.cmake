# fault.memcg (memcg.sh): creates memory cgroups and measures the peak
# usage of the runs in them, so it runs alone.  It reuses the integration
# programs (bigtext, libbigtext.so, json_flat): no helper program of its own.
list(APPEND fault_serial memcg)
