# Rendered by wakebench report; run from this folder: gnuplot rtt-pipe.gp
# Writes rtt-pipe.png and rtt-pipe.svg from rtt-pipe.dat.
if (strstrt(GPVAL_TERMINALS, " pngcairo ") > 0) {
  set terminal pngcairo size 1000,600 noenhanced font "sans,10"
} else {
  set terminal png size 1000,600 noenhanced
}
set output 'rtt-pipe.png'
set datafile missing 'NaN'
set title 'pipe: CDF of the round-trip time per placement'
set xlabel 'round-trip time (ns, log scale)'
set ylabel 'share of round trips at or below (percentile, log scale of the tail)'
set logscale x
set grid
set key outside right top
set yrange [0:*]
set xtics ('500' 500, '1000' 1000, '2000' 2000, '5000' 5000, '10000' 10000, '20000' 20000, '50000' 50000, '100000' 100000)
set ytics ('0' 0, 'p50' 0.30103, 'p90' 1, 'p99' 2, 'p99.9' 3, 'p99.99' 4, 'p99.999' 5)
plot 'rtt-pipe.dat' index 0 using 1:2 with lines lw 2 title 'processes/same-cpu', \
     'rtt-pipe.dat' index 1 using 1:2 with lines lw 2 title 'processes/llc', \
     'rtt-pipe.dat' index 2 using 1:2 with lines lw 2 title 'processes/kernel', \
     'rtt-pipe.dat' index 3 using 1:2 with lines lw 2 title 'threads/same-cpu', \
     'rtt-pipe.dat' index 4 using 1:2 with lines lw 2 title 'threads/llc', \
     'rtt-pipe.dat' index 5 using 1:2 with lines lw 2 title 'threads/kernel:0,1'
set terminal svg size 1000,600 noenhanced font "sans,10"
set output 'rtt-pipe.svg'
replot
unset output
