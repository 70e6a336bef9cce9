# Rendered by wakebench report; run from this folder: gnuplot hist-futex.gp
# Writes hist-futex.png and hist-futex.svg from hist-futex.dat.
if (strstrt(GPVAL_TERMINALS, " pngcairo ") > 0) {
  set terminal pngcairo size 1000,600 noenhanced font "sans,10"
} else {
  set terminal png size 1000,600 noenhanced
}
set output 'hist-futex.png'
set datafile missing 'NaN'
set title 'futex: histogram of the round-trip time per placement'
set xlabel 'round-trip time (ns, log scale)'
set ylabel 'round trips per 1/8-octave bin (%)'
set logscale x
set grid
set key outside right top
set yrange [0:*]
set xtics ('500' 500, '1000' 1000, '2000' 2000, '5000' 5000, '10000' 10000, '20000' 20000, '50000' 50000, '100000' 100000)
plot 'hist-futex.dat' index 0 using 1:2 with histeps lw 2 title 'threads/same-cpu', \
     'hist-futex.dat' index 1 using 1:2 with histeps lw 2 title 'threads/llc', \
     'hist-futex.dat' index 2 using 1:2 with histeps lw 2 title 'threads/kernel'
set terminal svg size 1000,600 noenhanced font "sans,10"
set output 'hist-futex.svg'
replot
unset output
